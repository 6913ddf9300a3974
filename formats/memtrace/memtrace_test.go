package memtrace

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// figure5 is the paper's Fig. 5 program as a trace:
//
//	1 var x = {}, y = {};      // x: obj 2, y: obj 3
//	2 function m(p, q) { p.f = q; return p }
//	3 m(x, y); x = null;
func figure5(t testing.TB) []byte {
	var b bytes.Buffer
	w, err := NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	_, base, err := w.Script("/app/fig5.js", CommonJS, []Pos{
		{Line: 1, Column: 1}, {Line: 1, Column: 9}, {Line: 1, Column: 20}, {Line: 2, Column: 1},
		{Line: 2, Column: 20}, {Line: 2, Column: 29}, {Line: 3, Column: 1}, {Line: 3, Column: 10},
	})
	if err != nil {
		t.Fatal(err)
	}
	evs := []Event{
		{Kind: FreeVars, At: base + 1, Names: []string{}},
		{Kind: FreeVars, At: base + 4, Names: []string{}},
		{Kind: ScriptEnter, At: base + 1, Script: 1, Ctx: 2},
		{Kind: CreateFun, At: base + 4, Obj: 4, Ctx: 2, Proto: 5},
		{Kind: Declare, At: base + 4, Ctx: 2, Name: "m", Value: 4},
		{Kind: CreateObj, At: base + 2, Obj: 2, ObjectKind: ObjectLiteral},
		{Kind: Declare, At: base + 2, Ctx: 2, Name: "x", Value: 2},
		{Kind: CreateObj, At: base + 3, Obj: 3},
		{Kind: Declare, At: base + 3, Ctx: 2, Name: "y", Value: 3},
		{Kind: TopLevelFlush, At: base + 1},
		{Kind: Call, At: base + 7, Obj: 4},
		{Kind: FunctionEnter, At: base + 4, Ctx: 3, Parent: 2, Obj: 4},
		{Kind: Declare, At: base + 4, Ctx: 3, Name: "p", Value: 2},
		{Kind: Declare, At: base + 4, Ctx: 3, Name: "q", Value: 3},
		{Kind: PutField, At: base + 5, Obj: 2, Key: Key{Name: "f"}, Value: 3},
		{Kind: Return, At: base + 6, Ctx: 3, Value: 2},
		{Kind: FunctionExit, At: base + 4, Ctx: 3, How: Returned},
		{Kind: Write, At: base + 8, Ctx: 2, Name: "x", Value: NoObject},
		{Kind: TopLevelFlush, At: base + 7},
		{Kind: LastUse, Obj: 2, UseTime: 15, At: base + 5},
		{Kind: LastUse, Obj: 4, UseTime: 10, At: base + 7},
		{Kind: EndLastUse, UseTime: 18},
		{Kind: ScriptExit, At: base + 1, Ctx: 2},
		{Kind: Exit, Code: 0, How: ExitLoopDone},
		{Kind: End, Code: 0},
	}
	for i := range evs {
		if err := w.Write(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func readAll(t *testing.T, raw []byte) []Event {
	t.Helper()
	r, err := NewReader(bytes.NewReader(raw), "t.hxtrace")
	if err != nil {
		t.Fatal(err)
	}
	var out []Event
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		ev.Names = append([]string(nil), ev.Names...)
		out = append(out, ev)
	}
}

func TestRoundTripFigure5(t *testing.T) {
	evs := readAll(t, figure5(t))
	var got []string
	for _, ev := range evs {
		got = append(got, ev.String())
	}
	want := []string{
		"0 SCRIPT /app/fig5.js iids 1..8",
		"0 FREE_VARS /app/fig5.js:1:1 []",
		"0 FREE_VARS /app/fig5.js:2:1 []",
		"1 SCRIPT_ENTER /app/fig5.js:1:1 script 1 ctx 2",
		"2 CREATE_FUN /app/fig5.js:2:1 obj 4 ctx 2 proto 5",
		"3 DECLARE /app/fig5.js:2:1 ctx 2 m = 4",
		"4 CREATE_OBJ /app/fig5.js:1:9 obj 2 kind 0",
		"5 DECLARE /app/fig5.js:1:9 ctx 2 x = 2",
		"6 CREATE_OBJ /app/fig5.js:1:20 obj 3 kind 0",
		"7 DECLARE /app/fig5.js:1:20 ctx 2 y = 3",
		"8 TOP_LEVEL_FLUSH /app/fig5.js:1:1",
		"9 CALL /app/fig5.js:3:1 fn 4",
		"10 FUNCTION_ENTER /app/fig5.js:2:1 ctx 3 parent 2 fn 4",
		"11 DECLARE /app/fig5.js:2:1 ctx 3 p = 2",
		"12 DECLARE /app/fig5.js:2:1 ctx 3 q = 3",
		"13 PUTFIELD /app/fig5.js:2:20 2.f = 3",
		"14 RETURN /app/fig5.js:2:29 ctx 3 value 2",
		"15 FUNCTION_EXIT /app/fig5.js:2:1 ctx 3 how 0",
		"16 WRITE /app/fig5.js:3:10 ctx 2 x = 0",
		"17 TOP_LEVEL_FLUSH /app/fig5.js:3:1",
		"17 LAST_USE obj 2 at 15 /app/fig5.js:2:20",
		"17 LAST_USE obj 4 at 10 /app/fig5.js:3:1",
		"17 END_LAST_USE 18",
		"18 SCRIPT_EXIT /app/fig5.js:1:1 ctx 2 how 0",
		"18 EXIT code 0 how 0 \"\"",
		"18 END code 0 signal 0 flags 0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("decoded\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestKeysAndCollections(t *testing.T) {
	var b bytes.Buffer
	w, _ := NewWriter(&b)
	_, base, _ := w.Script("file:///m.mjs", Module, []Pos{{Line: 3, Column: 5}, {Line: 1, Column: 2}})
	for _, ev := range []Event{
		{Kind: PutField, At: base + 1, Obj: 7, Key: Key{Kind: KeyIndex, N: 41}, Value: 8},
		{Kind: PutField, At: base + 2, Obj: 7, Key: Key{Name: "#priv"}},
		{Kind: CollSet, At: base + 1, Obj: 9, Key: Key{Kind: KeyObject, N: 8}, Value: 8},
		{Kind: CollSet, At: base + 1, Obj: 9, Key: Key{Name: `"k"`}, Value: 10},
		{Kind: CollDelete, At: base + 2, Obj: 9, Key: Key{Name: "12"}},
		{Kind: CollClear, At: base + 2, Obj: 9},
		{Kind: FreeVars, At: base + 1, AnyVars: true},
		{Kind: Unseen, At: base + 2, How: UnseenEval, Text: "eval at m.mjs:1:2"},
		{Kind: Idle, Millis: 1500},
		{Kind: Signal, Text: "SIGTERM"},
		{Kind: Exit, Code: -1, How: ExitSignal, Text: "SIGTERM"},
		{Kind: End, Code: -1, Signal: 9, Flags: EndCutOff | EndNoExit},
	} {
		if err := w.Write(&ev); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	evs := readAll(t, b.Bytes())
	var got []string
	for _, ev := range evs {
		got = append(got, ev.String())
	}
	want := []string{
		"0 SCRIPT file:///m.mjs iids 1..2",
		"1 PUTFIELD file:///m.mjs:3:5 7.[41] = 8",
		"2 PUTFIELD file:///m.mjs:1:2 7.#priv = 0",
		"3 COLL_SET file:///m.mjs:3:5 9 @8 = 8",
		`4 COLL_SET file:///m.mjs:3:5 9 "k" = 10`,
		"5 COLL_DELETE file:///m.mjs:1:2 9 12",
		"6 COLL_CLEAR file:///m.mjs:1:2 9",
		"6 FREE_VARS file:///m.mjs:3:5 any",
		`6 UNSEEN file:///m.mjs:1:2 what 1 "eval at m.mjs:1:2"`,
		"6 IDLE 1500 ms",
		"6 SIGNAL SIGTERM",
		`6 EXIT code -1 how 3 "SIGTERM"`,
		"6 END code -1 signal 9 flags 3",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("decoded\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestNextAllocatesNothing: program events decode without a heap
// allocation (the analysis reads hundreds of millions of them).
func TestNextAllocatesNothing(t *testing.T) {
	var b bytes.Buffer
	w, _ := NewWriter(&b)
	_, base, _ := w.Script("/a.js", CommonJS, []Pos{{Line: 1, Column: 1}})
	const n = 1000
	for i := 0; i < n; i++ {
		w.Write(&Event{Kind: PutField, At: base + 1, Obj: uint64(i + 2), Key: Key{Name: "next"}, Value: uint64(i + 3)})
		w.Write(&Event{Kind: Write, At: base + 1, Ctx: 2, Name: "cur", Value: uint64(i + 3)})
	}
	w.Write(&Event{Kind: End})
	w.Flush()
	r, err := NewReader(bytes.NewReader(b.Bytes()), "a")
	if err != nil {
		t.Fatal(err)
	}
	r.Next() // the SCRIPT record
	allocs := testing.AllocsPerRun(n, func() {
		if ev, err := r.Next(); err != nil || ev.Kind != PutField && ev.Kind != Write {
			t.Fatalf("%v %v", ev.Kind, err)
		}
	})
	if allocs != 0 {
		t.Errorf("Next allocates %.1f times per event", allocs)
	}
}

func TestBadInput(t *testing.T) {
	good := figure5(t)
	for _, c := range []struct {
		name string
		raw  []byte
		want string
	}{
		{"not a trace", []byte("{\"snapshot\":"), "not a heapx memory trace"},
		{"version", append([]byte(Magic), 9), "byte 4: memory trace version 9"},
		{"truncated inside a record", good[:len(good)-2], "the trace ends inside field"},
		{"no END", good[:len(good)-4], "truncated: it ends without an END record"},
		{"unknown kind", append(append([]byte{}, good[:5]...), 0x7f), "byte 5: unknown record kind 0x7f"},
		{"IDLE in version 1", append([]byte(Magic+"\x01"), byte(Idle), 5), "byte 5: unknown record kind 0x09 in a version 1 trace"},
		{"undefined string", append([]byte(Magic+"\x01"), byte(Declare), 0, 2, 5, 0), "byte 8: DECLARE record at byte 5: field name: string id 5 is not defined"},
		{"undefined iid", append([]byte(Magic+"\x01"), byte(TopLevelFlush), 3), "byte 6: TOP_LEVEL_FLUSH record at byte 5: iid 3 is not defined by a SCRIPT record"},
		{"sparse string ids", append([]byte(Magic+"\x01"), byte(StringDef), 2, 1, 'a'), "defines string id 2 where 1 was expected"},
		{"after END", append(append([]byte{}, good...), byte(TopLevelFlush)), "data after the END record"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := drain(c.raw)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "bad.hxtrace") {
				t.Errorf("error %v, want one naming the file and %q", err, c.want)
			}
		})
	}
}

func drain(raw []byte) error {
	r, err := NewReader(bytes.NewReader(raw), "bad.hxtrace")
	if err != nil {
		return err
	}
	for {
		if _, err := r.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// FuzzReader: no input makes the reader panic or loop; the seeds are the
// hand-made traces and the traces heapx trace wrote in testdata.
func FuzzReader(f *testing.F) {
	f.Add(figure5(f))
	seeds, _ := filepath.Glob("testdata/*.hxtrace")
	for _, s := range seeds {
		if raw, err := os.ReadFile(s); err == nil {
			f.Add(raw)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		drain(raw)
	})
}

// TestRealTraces: the traces heapx trace wrote decode to their END record,
// every program event with a place in the source.
func TestRealTraces(t *testing.T) {
	for name, end := range map[string]string{"features.hxtrace": "code 0 signal 0", "closure.hxtrace": "code 0 signal 0",
		"server.hxtrace": "code -1 signal 2"} { // Ctrl-C
		idles := 0
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(bytes.NewReader(raw), name)
		if err != nil {
			t.Fatal(err)
		}
		var last Event
		events := 0
		for {
			ev, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if ev.Kind == Idle {
				idles++
			}
			if ev.Kind.IsEvent() {
				events++
				if ev.Kind != UpdateIID && ev.Kind != Resume && ev.At != 0 && ev.Pos.Line == 0 {
					t.Errorf("%s: %v has no position", name, ev)
				}
			}
			last = ev
		}
		if last.Kind != End || !strings.Contains(last.String(), end) || uint64(events) != r.Time() || events < 20 {
			t.Errorf("%s: last %v, %d events, clock %d; want an END with %s", name, last, events, r.Time(), end)
		}
		if name == "server.hxtrace" && idles != 6 {
			t.Errorf("%s: %d idle points, want 6 (listening, five requests)", name, idles)
		}
	}
}
