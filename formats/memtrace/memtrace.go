// Package memtrace reads and writes heapx's memory trace: the stream of
// allocations, reference writes, calls and last uses that `heapx trace`
// records from an instrumented Node program and the lifetime analysis
// replays (docs/trace.md is the format's contract; the record kinds follow
// MemInsight's trace).
//
// A trace is read as a stream: Reader.Next decodes one record at a time into
// an Event value, resolving string ids to strings and instruction ids to
// file:line:column, without a heap allocation per program event. The
// reader keeps only the string, script and position tables, so its memory
// grows with the instrumented source, not with the trace.
package memtrace

import (
	"fmt"
	"io"
	"os"
)

// Magic is the first four bytes of a trace; Version is the format version
// this package writes (the fifth byte). It reads versions 1 and 2: 2 added
// the IDLE and SIGNAL records and EXIT's ExitSignal.
const (
	Magic   = "\x89HXT"
	Version = 2
)

// IsTrace says whether the file at path begins as a memory trace does
// (Magic): front ends give it to the lifetime analysis rather than to a
// heap dump's reader.
func IsTrace(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(Magic))
	_, err = io.ReadFull(f, head)
	return err == nil && string(head) == Magic
}

// Kind is a record's kind, its first byte. Kinds below FirstEvent are
// metadata and do not advance the clock; the others are program events,
// each one tick.
type Kind uint8

// The record kinds (docs/trace.md has their fields; Idle and Signal came
// with version 2).
const (
	StringDef     Kind = 0x01 // defines a string id; consumed by the Reader, never returned
	ScriptDef     Kind = 0x02 // an instrumented script and its instruction positions
	FreeVars      Kind = 0x03 // a function's variables that nested functions capture
	LastUse       Kind = 0x04 // an object's latest use in the current block
	EndLastUse    Kind = 0x05 // every use up to UseTime has been reported
	Unseen        Kind = 0x06 // something ran that the trace does not show
	Exit          Kind = 0x07 // the program is ending, as the shim saw it
	End           Kind = 0x08 // written by heapx: how the process ended; always last
	Idle          Kind = 0x09 // the program returned to its event loop with an empty stack
	Signal        Kind = 0x0a // the program received a signal
	Declare       Kind = 0x10 // a binding's first value
	Write         Kind = 0x11 // a variable assignment
	CreateObj     Kind = 0x12 // an object allocation
	CreateFun     Kind = 0x13 // a function or class creation
	PutField      Kind = 0x14 // a property write or delete
	FunctionEnter Kind = 0x15 // a call began, with a new context
	FunctionExit  Kind = 0x16 // a call completed; its context is sealed
	Return        Kind = 0x17 // a call's return value
	Call          Kind = 0x18 // a call site called a known function object
	Suspend       Kind = 0x19 // await or yield
	Resume        Kind = 0x1a // continued after await or yield
	TopLevelFlush Kind = 0x1b // a script's top-level statement ended
	UpdateIID     Kind = 0x1c // an object seen early belongs to this allocation site
	ScriptEnter   Kind = 0x1d // a script's top level began, with a new context
	ScriptExit    Kind = 0x1e // a script's top level completed
	CollSet       Kind = 0x1f // Map.set or Set.add
	CollDelete    Kind = 0x20 // Map or Set delete
	CollClear     Kind = 0x21 // Map or Set clear

	// FirstEvent is the smallest program-event kind: records of this kind
	// and above advance the clock.
	FirstEvent = Declare
	lastKind   = CollClear
)

var kindNames = [...]string{
	StringDef: "STRING", ScriptDef: "SCRIPT", FreeVars: "FREE_VARS", LastUse: "LAST_USE",
	EndLastUse: "END_LAST_USE", Unseen: "UNSEEN", Exit: "EXIT", End: "END", Idle: "IDLE", Signal: "SIGNAL",
	Declare: "DECLARE", Write: "WRITE", CreateObj: "CREATE_OBJ", CreateFun: "CREATE_FUN",
	PutField: "PUTFIELD", FunctionEnter: "FUNCTION_ENTER", FunctionExit: "FUNCTION_EXIT",
	Return: "RETURN", Call: "CALL", Suspend: "SUSPEND", Resume: "RESUME",
	TopLevelFlush: "TOP_LEVEL_FLUSH", UpdateIID: "UPDATE_IID", ScriptEnter: "SCRIPT_ENTER",
	ScriptExit: "SCRIPT_EXIT", CollSet: "COLL_SET", CollDelete: "COLL_DELETE", CollClear: "COLL_CLEAR",
}

// String is the kind's name in docs/trace.md (PUTFIELD, LAST_USE...).
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(0x%02x)", uint8(k))
}

// Known says whether the format (its latest version) defines the kind.
func (k Kind) Known() bool { return int(k) < len(kindNames) && kindNames[k] != "" }

// knownIn says whether version v defines the kind.
func (k Kind) knownIn(v byte) bool { return k.Known() && (v >= 2 || (k != Idle && k != Signal)) }

// IsEvent says whether records of the kind are program events, which
// advance the clock by one.
func (k Kind) IsEvent() bool { return k >= FirstEvent }

// GlobalObject is the object id of globalThis, GlobalContext the context id
// of the global bindings; NoObject stands for a primitive value.
const (
	NoObject      = 0
	GlobalObject  = 1
	GlobalContext = 1
)

// ScriptKind says how a script was loaded.
type ScriptKind uint8

// Script kinds.
const (
	CommonJS ScriptKind = 0
	Module   ScriptKind = 1
	Eval     ScriptKind = 2
)

// ObjectKind says what kind of expression allocated a CREATE_OBJ's object.
type ObjectKind uint8

// Object kinds (docs/trace.md, CREATE_OBJ; 4 and 5 are reserved).
const (
	ObjectLiteral ObjectKind = 0
	ArrayLiteral  ObjectKind = 1
	NewObject     ObjectKind = 2
	RegExpLiteral ObjectKind = 3
	MapObject     ObjectKind = 6
	SetObject     ObjectKind = 7
)

// Completion says how a call or script top level ended (FUNCTION_EXIT,
// SCRIPT_EXIT).
const (
	Returned = 0
	Threw    = 1
)

// What an UNSEEN record reports.
const (
	UnseenEval           = 1
	UnseenWorker         = 2
	UnseenUninstrumented = 3
	UnseenParseError     = 4
	UnseenChildProcess   = 5
)

// How an EXIT record says the program ended: its event loop ran out,
// process.exit, an uncaught exception or unhandled rejection (one kind:
// docs/trace.md), or a signal it had no listener for (version 2; the
// record's detail names it).
const (
	ExitLoopDone    = 0
	ExitProcessExit = 1
	ExitUncaught    = 2
	ExitSignal      = 3
)

// END record flags.
const (
	// EndCutOff: the shim's last chunk was cut short (the program was
	// killed mid-write); its records are lost.
	EndCutOff = 1 << 0
	// EndNoExit: no EXIT record came; the program did not end normally.
	EndNoExit = 1 << 1
)

// Pos is a place in the original source: Line and Column are 1-based, the
// column in UTF-16 code units as V8 counts them. The zero Pos is "unknown".
type Pos struct {
	File   string
	Line   int
	Column int
}

// String is file:line:column, or "?" for the zero Pos.
func (p Pos) String() string {
	if p.File == "" && p.Line == 0 {
		return "?"
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
}

// KeyKind says what a property or collection key is.
type KeyKind uint8

// Key kinds: a name (property name, symbol, private field, or a primitive
// collection key's text), an array index, or an object (collection keys).
const (
	KeyName KeyKind = iota
	KeyIndex
	KeyObject
)

// Key is a PUTFIELD's property key or a COLL_*'s collection key.
type Key struct {
	Kind KeyKind
	Name string // KeyName: the name or text
	N    uint64 // KeyIndex: the index; KeyObject: the object id
}

// String is the key as the docs write it: a name, [index] or @object.
func (k Key) String() string {
	switch k.Kind {
	case KeyIndex:
		return fmt.Sprintf("[%d]", k.N)
	case KeyObject:
		return fmt.Sprintf("@%d", k.N)
	}
	return k.Name
}

// Event is one decoded record. Which fields are set depends on Kind
// (docs/trace.md); the others are zero. Names aliases the Reader's buffer
// and is valid until the next call of Next.
type Event struct {
	Kind   Kind
	Time   uint64 // the clock: this event's time, or the last event's for metadata
	Offset int64  // byte offset of the record in the trace

	At  uint64 // the iid (instruction id), 0 if none
	Pos Pos    // At resolved to the original source

	Obj    uint64 // the subject object: created, PUTFIELD base, collection, LAST_USE, UPDATE_IID, called or entered function
	Value  uint64 // the object stored, declared, written or returned (0: a primitive)
	Proto  uint64 // CREATE_FUN: the function's prototype object
	Ctx    uint64 // the context (DECLARE, WRITE, CREATE_FUN, FUNCTION_*, RETURN, SUSPEND, RESUME, SCRIPT_*)
	Parent uint64 // FUNCTION_ENTER: the new context's parent

	Name string // DECLARE, WRITE: the variable
	Key  Key    // PUTFIELD, COLL_SET, COLL_DELETE

	ObjectKind ObjectKind // CREATE_OBJ
	How        uint64     // FUNCTION_EXIT, SCRIPT_EXIT: Returned or Threw; UNSEEN: what; EXIT: how
	UseTime    uint64     // LAST_USE: the use's time; END_LAST_USE: the time uses are complete up to

	Script     uint64     // SCRIPT, SCRIPT_ENTER: the script number
	File       string     // SCRIPT, SCRIPT_ENTER: the script's file or URL
	ScriptKind ScriptKind // SCRIPT
	Base, N    uint64     // SCRIPT: its iids are Base+1..Base+N

	Names   []string // FREE_VARS: the captured variables
	AnyVars bool     // FREE_VARS: the function has eval or with; nothing is sealed

	Text   string // UNSEEN, EXIT: the detail; SIGNAL: the signal's name (SIGINT)
	Millis uint64 // IDLE: milliseconds since the program started
	Code   int64  // EXIT, END: exit code
	Signal uint64 // END: the signal that ended the process, 0 none
	Flags  uint64 // END: EndCutOff, EndNoExit
}
