// Package formats is the registry of heap-dump formats: the one way heapx
// opens or writes a dump. Each format lives in its own package under
// formats/ and registers itself from an init function with a detector
// (magic bytes, then file extension) and a reader, plus a writer when the
// format can be written. Adding a format is adding one package, one
// import in formats/all and its name to allNames; nothing else changes.
// The package (see formats/v8, formats/spidermonkey):
//
//   - calls Register from init with a Name, its Extensions and a Detect
//     strict enough not to claim other formats' heads (the registry
//     breaks ties by extension);
//   - reads its input through internal/input (gzip, progress, the one
//     error for a dump cut short) straight into the model's columns
//     (model.Alloc, model.Grow, model.IDMap), returning a FormatError
//     with the byte offset for bad input, never panicking;
//   - sets ReadStream too when it reads in one pass, so a dump can come
//     from a pipe (OpenInput);
//   - has a FuzzRead target seeded from a small real dump, and tests that
//     compare what it reads with the runtime's own tools.
//
// formats/all imports every format package, so that a program (the
// command, the heapx package) reads them all by importing it alone.
//
// It also holds what every format shares: the FormatError type that names
// the file, section and byte offset of bad input, and WriteFileAtomic, so
// no writer leaves a half-written file that looks complete.
package formats

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/heapx/heapx/internal/gz"
	"github.com/heapx/heapx/internal/termtext"
	"github.com/heapx/heapx/model"
)

// ReadOptions tune a read.
type ReadOptions struct {
	// Progress, if set, is called now and then with the number of input
	// bytes consumed and the input size (-1 if unknown).
	Progress func(done, total int64)
	// Results, if set, receives the analysis results the file carries
	// (docs/format.md, section 4); formats without results leave it alone.
	// Results.Shallow is nil after a read that found none.
	Results *model.Results
	// CountEdges, if set, asks for the graph without its edges: a reader
	// that can leave them out only counts and checks them (they are most
	// of a dump's memory: 9 bytes each against 25 per node in V8) and
	// returns a graph with none, every node's range empty. *CountEdges is
	// set to the number of edges the dump holds either way (Input.Read
	// sets it for readers that keep the edges). For callers that need the
	// nodes alone, such as heapx info.
	CountEdges *int
	// Binary is the executable a core dump's process ran (formats/nodecore
	// needs the node binary's postmortem metadata); formats that carry
	// their own type information ignore it.
	Binary string
}

// WriteOptions tune a write.
type WriteOptions struct {
	// Progress, if set, is called now and then with the work done and the
	// total (units are the writer's; -1 total if unknown).
	Progress func(done, total int64)
	// Results, if set, are analysis results for the graph being written;
	// formats that can carry them (jsonl, sqlite) persist them, others
	// ignore them.
	Results *model.Results
	// Sources are the dumps the graph was read from: the output is made
	// no more readable than they are (WriteFileAtomic).
	Sources []string
	// Generator names the program writing, for formats that record it
	// (the exchange format's generator metadata; "" for "heapx").
	Generator string
	// NodeFields are namespaced fields a producer adds to every node
	// (docs/format.md 1.1); the exchange formats write them, others
	// ignore them.
	NodeFields []NodeField
}

// NodeField is one namespaced integer field of every node, which the
// exchange format lets a producer declare beside the built-in ones
// (docs/format.md 2.5). It is model data, so producers in the analysis
// packages need no reader.
type NodeField = model.NodeField

// CheckNodeFields says what is wrong with fields as node fields of a
// graph of n nodes: a name not namespaced or repeated, or a column of
// another length.
func CheckNodeFields(fields []NodeField, n int) error {
	seen := map[string]bool{}
	for _, f := range fields {
		ns, name, ok := strings.Cut(f.Name, ":")
		if !ok || name == "" || !namespaceIdent(ns) {
			return fmt.Errorf("node field %q: not a namespaced name (NAMESPACE:name, NAMESPACE lowercase letters, digits and _)", f.Name)
		}
		if seen[f.Name] {
			return fmt.Errorf("node field %q given twice", f.Name)
		}
		seen[f.Name] = true
		if len(f.Values) != n || (f.Missing != nil && len(f.Missing) != n) {
			return fmt.Errorf("node field %q has %d values for %d nodes", f.Name, len(f.Values), n)
		}
	}
	return nil
}

// namespaceIdent says whether s is a namespace: [a-z][a-z0-9_]*.
func namespaceIdent(s string) bool {
	for i, c := range s {
		if !(c >= 'a' && c <= 'z' || i > 0 && (c >= '0' && c <= '9' || c == '_')) {
			return false
		}
	}
	return s != ""
}

// Format describes one registered format.
type Format struct {
	// Name is the short name used by --to and in messages ("v8", "jsonl").
	Name string
	// Description is one line for help texts.
	Description string
	// Extensions are the file suffixes, with dots, that select this format
	// for writing and break ties when detecting (".heapsnapshot").
	Extensions []string
	// Detect reports whether head, the first bytes of a file (up to
	// HeadSize, after gzip decompression when Gzip is set), is this format.
	Detect func(head []byte) bool
	// DetectDir, set by formats whose dump is a directory (a Parquet
	// partition), reports whether the directory at path is one.
	DetectDir func(path string) bool
	// Read reads the dump at path.
	Read func(path string, opt ReadOptions) (*model.Graph, error)
	// ReadStream, set by formats read in one pass, reads the dump from r
	// (size is its length, -1 if unknown; name is for messages). Input
	// that can be read only once (a pipe, a FIFO, /dev/stdin) is read
	// with it; formats without it need a file.
	ReadStream func(r io.Reader, size int64, name string, opt ReadOptions) (*model.Graph, error)
	// Write writes g to w; nil when the format is read-only. Writers that
	// need a real file (SQLite) set WriteFile instead.
	Write func(w io.Writer, g *model.Graph, opt WriteOptions) error
	// WriteFile writes g to a new file at path; used instead of Write.
	WriteFile func(path string, g *model.Graph, opt WriteOptions) error
	// Results says the format persists analysis results
	// (WriteOptions.Results, docs/format.md section 4), so a command can
	// refuse to compute results nobody would keep.
	Results bool
}

// HeadSize is how many leading bytes Detect gets.
const HeadSize = 4096

var (
	mu       sync.RWMutex
	registry []*Format
)

// Register adds a format. It panics on a duplicate name, which is a
// programming error caught by any test.
func Register(f Format) {
	mu.Lock()
	defer mu.Unlock()
	for _, g := range registry {
		if g.Name == f.Name {
			panic("formats: format " + f.Name + " registered twice")
		}
	}
	registry = append(registry, &f)
	sort.Slice(registry, func(i, j int) bool { return registry[i].Name < registry[j].Name })
}

// All returns the registered formats sorted by name.
func All() []*Format {
	mu.RLock()
	defer mu.RUnlock()
	return append([]*Format(nil), registry...)
}

// Lookup returns the format registered under name.
func Lookup(name string) (*Format, bool) {
	for _, f := range All() {
		if f.Name == name {
			return f, true
		}
	}
	return nil, false
}

// ByExtension returns the format whose extension ends path (a trailing
// ".gz" is ignored), for choosing an output format.
func ByExtension(path string) (*Format, bool) {
	p := strings.ToLower(strings.TrimSuffix(strings.ToLower(path), ".gz"))
	var best *Format
	bestLen := 0
	for _, f := range All() {
		for _, ext := range f.Extensions {
			if strings.HasSuffix(p, ext) && len(ext) > bestLen {
				best, bestLen = f, len(ext)
			}
		}
	}
	return best, best != nil
}

// Detect finds the format of the file at path from its content (gzip is
// looked through), using the extension only to break ties. The error says
// plainly when the path is missing, a directory, empty or of no known
// format.
func Detect(path string) (*Format, error) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file", path)
		}
		return nil, err
	}
	if st.IsDir() {
		for _, f := range All() {
			if f.DetectDir != nil && f.DetectDir(path) {
				return f, nil
			}
		}
		return nil, fmt.Errorf("%s: is a directory, not a heap dump", path)
	}
	if !st.Mode().IsRegular() {
		// Reading the head would take it from whoever reads next.
		return nil, fmt.Errorf("%s: %w", path, errNotAFile)
	}
	head, err := readHead(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return detectHead(path, head)
}

// allPackage is the package that links in every format heapx has, which
// a Go program using heapx as a library imports (the heapx package does).
const allPackage = "github.com/heapx/heapx/formats/all"

// allNames are the formats allPackage links in, so that the error for a
// dump of no registered format can say which of them a program lacks.
var allNames = []string{"hprof", "jsonl", "nodecore", "parquet", "spidermonkey", "sqlite", "v8"}

// detectHead finds the format of the file at path whose first bytes
// (decompressed) are head.
func detectHead(path string, head []byte) (*Format, error) {
	if len(All()) == 0 {
		// A library user who imported formats but no format package
		// would otherwise read "known formats: " with nothing after it.
		return nil, fmt.Errorf("%s: no heap-dump format is linked into this program, so none can read it: import %s (or the packages of the formats to read, such as formats/v8)", path, allPackage)
	}
	if len(head) == 0 {
		return nil, fmt.Errorf("%s: empty file, not a heap dump", path)
	}
	var found []*Format
	for _, f := range All() {
		if f.Detect != nil && f.Detect(head) {
			found = append(found, f)
		}
	}
	switch len(found) {
	case 0:
		if what := notADump(path, head); what != "" {
			return nil, fmt.Errorf("%s: %s", path, what)
		}
		// The formats a file can be in: not those whose dumps are
		// directories (DetectDir only).
		names, linked := []string{}, []string{}
		for _, f := range All() {
			linked = append(linked, f.Name)
			if f.Detect != nil {
				names = append(names, f.Name)
			}
		}
		var missing []string
		for _, name := range allNames {
			if !slices.Contains(linked, name) {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("%s: not a heap dump heapx can read (known formats: %s; %s not linked into this program: import %s)",
				path, strings.Join(names, ", "), strings.Join(missing, ", "), allPackage)
		}
		return nil, fmt.Errorf("%s: not a heap dump heapx can read (known formats: %s)", path, strings.Join(names, ", "))
	case 1:
		return found[0], nil
	}
	if f, ok := ByExtension(path); ok {
		for _, g := range found {
			if g == f {
				return f, nil
			}
		}
	}
	return found[0], nil
}

// takeSnapshot says how to get what heapx reads instead of a profile.
const takeSnapshot = "heapx reads heap snapshots: take one with \"Heap snapshot\" in DevTools' Memory panel, or v8.writeHeapSnapshot() in Node.js"

// notADump says what a file of no known format is when it is something
// people mistake for a heap dump (an archive, another compression, a
// profile), and what to do: "" when it is nothing known. The head (gzip
// already looked through) decides; the extension only where the head says
// nothing.
func notADump(path string, head []byte) string {
	unpack := func(what, how string) string {
		return what + ", not a heap dump: " + how + " and give heapx the dump inside"
	}
	decompress := func(what, how string) string {
		return what + ", which heapx does not read: decompress it first (" + how + "); heapx reads gzip-compressed dumps as they are"
	}
	ext := strings.ToLower(filepath.Ext(strings.TrimSuffix(strings.ToLower(path), ".gz")))
	json := bytes.TrimLeft(head, " \t\r\n\ufeff")
	has := func(s string) bool { return bytes.Contains(json, []byte(s)) }
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")) || bytes.HasPrefix(head, []byte("PK\x05\x06")) || ext == ".zip":
		return unpack("a zip archive", "unzip it")
	case bytes.HasPrefix(head, []byte("7z\xbc\xaf\x27\x1c")) || ext == ".7z":
		return unpack("a 7-Zip archive", "extract it (7z x)")
	case len(head) > 262 && string(head[257:262]) == "ustar" || ext == ".tar":
		return unpack("a tar archive", "extract it (tar xf)")
	case bytes.HasPrefix(head, []byte("\xfd7zXZ\x00")) || ext == ".xz":
		return decompress("xz-compressed", "xz -d")
	case bytes.HasPrefix(head, []byte("\x28\xb5\x2f\xfd")) || ext == ".zst":
		return decompress("zstd-compressed", "zstd -d")
	case bytes.HasPrefix(head, []byte("BZh")) && len(head) > 3 && head[3] >= '1' && head[3] <= '9' || ext == ".bz2":
		return decompress("bzip2-compressed", "bunzip2")
	case bytes.HasPrefix(json, []byte("{")) && has(`"callFrame"`) && (bytes.HasPrefix(json, []byte(`{"head"`)) || has(`"selfSize"`)) || ext == ".heapprofile":
		return "a sampling heap profile (DevTools' \"Allocation sampling\", node --heap-prof), not a heap snapshot: it records where memory was allocated, not the objects on the heap; " + takeSnapshot
	case bytes.HasPrefix(json, []byte("{")) && has(`"callFrame"`) && (has(`"timeDeltas"`) || has(`"startTime"`) || bytes.HasPrefix(json, []byte(`{"nodes"`))) || ext == ".cpuprofile":
		return "a CPU profile (DevTools' JavaScript profiler, node --cpu-prof), not a heap dump; " + takeSnapshot
	case bytes.HasPrefix(json, []byte(`{"traceEvents"`)) || bytes.HasPrefix(json, []byte("[")) && has(`"ph":`) && has(`"pid":`):
		return "a performance trace (DevTools' Performance panel), not a heap dump; " + takeSnapshot
	}
	return ""
}

// Open detects the format of the file at path and reads it.
func Open(path string, opt ReadOptions) (*model.Graph, *Format, error) {
	in, err := OpenInput(path)
	if err != nil {
		return nil, nil, err
	}
	defer in.Close()
	g, err := in.Read(opt)
	if err != nil {
		return nil, in.Format, err
	}
	return g, in.Format, nil
}

// Input is a dump whose format is known, ready to be read: Open in two
// steps, for a caller that wants the format and size before reading (to
// draw a progress bar).
type Input struct {
	Path   string
	Format *Format
	// Size is the file's length; for input read as a stream, -1 until
	// Read, then the bytes it read.
	Size int64
	// Gzip says the input is gzip-compressed.
	Gzip bool

	file   *os.File     // the stream, when it can be read only once
	stream *countReader // its head again, then the rest
}

// errNotAFile is what Detect says of input it cannot look at without
// taking it from the reader that comes next.
var errNotAFile = errors.New("not a regular file (a pipe or a FIFO?): save the dump to a file first")

// OpenInput detects the format of the dump at path. A regular file is
// opened again by the read; anything else (a pipe, a FIFO, /dev/stdin, a
// shell's <(zcat dump.gz)) can be read only once, so it is opened here,
// its head detected and kept, and Read reads it from there in one pass,
// which the formats with ReadStream can do; the others need a file, and
// the error says so. Close releases it.
func OpenInput(path string) (*Input, error) {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		return openStream(path)
	}
	f, err := Detect(path)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() { // a format's dump directory (DetectDir)
		return &Input{Path: path, Format: f, Size: filesSize(path)}, nil
	}
	raw, err := readPrefix(path, 2)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Input{Path: path, Format: f, Size: st.Size(), Gzip: gz.HasMagic(raw)}, nil
}

// filesSize is the size of the files in dir (not below it): a dump
// directory's size.
func filesSize(dir string) int64 {
	ents, _ := os.ReadDir(dir)
	var n int64
	for _, e := range ents {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
	}
	return n
}

// openStream is OpenInput for input that can be read only once.
func openStream(path string) (*Input, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	rec := &recorder{r: file}
	head, err := peekHead(rec)
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f, err := detectHead(path, head)
	if err == nil && f.ReadStream == nil {
		err = fmt.Errorf("%s: not a regular file (a pipe or a FIFO?), and %s dumps are read from a file that can be read twice: save the dump to a file first", path, f.Name)
	}
	if err != nil {
		file.Close()
		return nil, err
	}
	return &Input{Path: path, Format: f, Size: -1, Gzip: gz.HasMagic(rec.b), file: file,
		stream: &countReader{r: io.MultiReader(bytes.NewReader(rec.b), file)}}, nil
}

// Read reads the dump; it can be called once.
func (in *Input) Read(opt ReadOptions) (g *model.Graph, err error) {
	if opt.CountEdges != nil {
		*opt.CountEdges = -1
		defer func() {
			if err == nil && *opt.CountEdges < 0 {
				*opt.CountEdges = g.NumEdges() // a reader that kept them
			}
		}()
	}
	if in.stream == nil {
		return in.Format.Read(in.Path, opt)
	}
	g, err = in.Format.ReadStream(in.stream, -1, in.Path, opt)
	in.Size = in.stream.n
	return g, err
}

// Close closes the stream, if the input is one.
func (in *Input) Close() error {
	if in.file == nil {
		return nil
	}
	return in.file.Close()
}

// Save writes g to path in format f, atomically. A path ending in ".gz"
// is gzip-compressed (stream formats only: a database cannot be).
func Save(path string, f *Format, g *model.Graph, opt WriteOptions) error {
	gzipped := strings.HasSuffix(strings.ToLower(path), ".gz")
	switch {
	case f.WriteFile != nil:
		if gzipped {
			return fmt.Errorf("%s: format %s cannot be gzip-compressed (drop the .gz)", path, f.Name)
		}
		return WriteFileAtomic(path, func(tmp string) error { return f.WriteFile(tmp, g, opt) }, opt.Sources...)
	case f.Write != nil:
		return WriteStream(path, func(w io.Writer) error {
			if !gzipped {
				return f.Write(w, g, opt)
			}
			zw := gz.NewWriter(w)
			err := f.Write(zw, g, opt)
			if cerr := zw.Close(); err == nil {
				err = cerr
			}
			return err
		}, opt.Sources...)
	}
	return fmt.Errorf("format %s cannot be written", f.Name)
}

// WriteStream is WriteFileAtomic for content written to an io.Writer:
// fill writes it to the temporary file, unbuffered (a fill that writes
// small pieces buffers them; one that streams what a program sends
// wants each piece on disk at once).
func WriteStream(path string, fill func(w io.Writer) error, sources ...string) error {
	return WriteFileAtomic(path, func(tmp string) error {
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return err
		}
		err = fill(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}, sources...)
}

// WriteFileAtomic creates a temporary file next to path, lets write fill it
// (by name), and renames it over path only if write succeeds, so an
// interrupted or failed write never leaves a file that looks complete.
//
// The file gets the mode the umask gives a new file, less what sources,
// the dumps it is made from, deny: a group or everyone else can read it
// only if they can read every source (for the group, the same group). A
// conversion or cache of a private dump (0600) is private too, whatever
// the umask; the temporary file is restricted before anything is written.
//
// A temporary file is named .NAME.tmp-heapx-RANDOM and locked (flock)
// while it is written. One whose lock is free was left by a writer that
// died (kill -9, a crash, a power cut); WriteFileAtomic removes those it
// finds in path's directory (RemoveStaleTemps).
func WriteFileAtomic(path string, write func(tmp string) error, sources ...string) (err error) {
	dir := filepath.Dir(path)
	RemoveStaleTemps(path)
	// Creating and registering the file is one step for RemoveTemps: a
	// signal between the two would otherwise leave the file behind.
	tempsMu.Lock()
	f, err := createTemp(dir, "."+filepath.Base(path)+tempInfix)
	if err != nil {
		tempsMu.Unlock()
		return err
	}
	tmp := f.Name()
	temps.Store(tmp, true)
	tempsMu.Unlock()
	// The lock is held until the file is renamed into place: released
	// earlier, the file would look abandoned to another heapx.
	defer func() {
		temps.Delete(tmp)
		if err != nil {
			os.Remove(tmp)
		}
		f.Close()
	}()
	mode, err := derivedMode(f, sources)
	if err != nil {
		return err
	}
	if err := f.Chmod(mode); err != nil {
		return err
	}
	if err := write(tmp); err != nil {
		return err
	}
	// Again, in case write made the file anew.
	if err := os.Chmod(tmp, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// tempInfix marks heapx's temporary files: .NAME.tmp-heapx-RANDOM. It
// keeps the ".tmp-" of older versions' names (.NAME.tmp-RANDOM).
const tempInfix = ".tmp-heapx-"

// createTemp creates a new file named prefix+RANDOM in dir, with the mode
// the umask gives (os.CreateTemp would give 0600, and the umask is only
// known from what the system makes of a file), locked for writing. A
// file removed as stale between its creation and its locking is made
// again.
func createTemp(dir, prefix string) (*os.File, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		if err != nil {
			return nil, err
		}
		// Without locks (a file system that has none) the file is
		// written all the same; it is then never taken for abandoned.
		if lock(f) != errLockBusy {
			if st, err := os.Stat(name); err == nil {
				if fst, err := f.Stat(); err == nil && os.SameFile(st, fst) {
					return f, nil
				}
			}
		}
		// Another heapx took it for abandoned before it was locked.
		f.Close()
		if try >= 100 {
			return nil, fmt.Errorf("%s: cannot create a temporary file that stays", dir)
		}
	}
}

// derivedMode is the mode of the new file f, which the umask made, less
// the group and other permissions a source does not grant (see
// WriteFileAtomic). A source that cannot be examined counts as private.
func derivedMode(f *os.File, sources []string) (fs.FileMode, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	mode := st.Mode().Perm()
	for _, src := range sources {
		sst, err := os.Stat(src)
		if err != nil {
			mode &^= 0o077
			continue
		}
		if sst.Mode()&0o040 == 0 || !sameGroup(st, sst) {
			mode &^= 0o070
		}
		if sst.Mode()&0o004 == 0 {
			mode &^= 0o007
		}
	}
	return mode, nil
}

// legacyTempAge is how long a temporary file of the older naming
// (.NAME.tmp-RANDOM, not locked) must have been left untouched before
// RemoveStaleTemps takes it for abandoned: a writer writes its temporary
// file without pause.
const legacyTempAge = time.Hour

// RemoveStaleTemps removes the temporary files that heapx writers killed
// while writing left in the directory of path, an output about to be
// written: files named .NAME.tmp-heapx-RANDOM that no process holds
// locked, whatever their NAME, and, for path's own name, files of the
// older naming .NAME.tmp-RANDOM untouched for legacyTempAge. Nothing else
// is touched; where files cannot be locked (Windows, a file system without
// locks), only the older naming is cleaned.
func RemoveStaleTemps(path string) {
	dir, legacy := filepath.Dir(path), "."+filepath.Base(path)+".tmp-"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, ".") {
			continue
		}
		p := filepath.Join(dir, name)
		if _, ok := temps.Load(p); ok {
			continue // this process is writing it
		}
		i := strings.LastIndex(name, ".tmp-")
		if i < 0 {
			continue
		}
		if rest, ok := strings.CutPrefix(name[i:], tempInfix); ok {
			if digits(rest) {
				removeIfUnlocked(p)
			}
			continue
		}
		if strings.HasPrefix(name, legacy) && digits(name[len(legacy):]) {
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > legacyTempAge {
				os.Remove(p)
			}
		}
	}
}

// errLockBusy is lock's answer for a file another writer holds.
var errLockBusy = errors.New("locked by another process")

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// temps holds the temporary files WriteFileAtomic is filling; tempsMu
// makes creating one and recording it here atomic for RemoveTemps.
var (
	temps   sync.Map
	tempsMu sync.Mutex
)

// RemoveTemps removes the temporary files of the atomic writes in
// progress. A command calls it when interrupted (SIGINT, SIGTERM), just
// before exiting, so an interrupted write leaves nothing behind: neither
// the output, which is only renamed into place once complete, nor the
// half-written temporary file. (A kill -9 cannot be caught; the next
// write into the same directory removes what it left, RemoveStaleTemps.)
func RemoveTemps() {
	tempsMu.Lock()
	defer tempsMu.Unlock()
	temps.Range(func(k, _ any) bool {
		p := k.(string)
		// A directory is moved out of its writer's way first: a file
		// the writer creates meanwhile would keep it from being removed.
		if st, err := os.Lstat(p); err == nil && st.IsDir() && os.Rename(p, p+".removing") == nil {
			p += ".removing"
		}
		os.RemoveAll(p)
		return true
	})
}

// TrackTemp records a temporary file or directory a writer fills outside
// WriteFileAtomic (formats/parquet's partition directories), so that
// RemoveTemps removes it too; untrack forgets it once it is renamed into
// place or removed.
func TrackTemp(path string) (untrack func()) {
	temps.Store(path, true)
	return func() { temps.Delete(path) }
}

// readHead returns up to HeadSize bytes of the file, decompressed when it
// is gzip.
func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return peekHead(f)
}

// readPrefix returns up to n bytes from the start of the file at path, as
// they are.
func readPrefix(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	k, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:k], nil
}

// FormatError reports input that is not well-formed for its format. It
// names the file, the section being read and the byte offset (in the
// uncompressed stream for compressed input) where the problem was found.
//
// Section and Msg can hold the dump's own text (a section key, a field or
// class name); Error shows what a terminal would act on escaped and cuts
// them to maxSectionBytes and maxMsgBytes. A reader quotes a dump's text
// in Msg with termtext.Quote, which cuts it shorter still.
type FormatError struct {
	File    string
	Section string
	Offset  int64 // -1 when the problem is not tied to one position
	Msg     string
	// Err is the cause, for errors.Is and errors.As, when there is one
	// to test for: ErrTruncated for a dump that ends early.
	Err error
}

// ErrTruncated is the cause of the error every reader gives for a dump
// that ends before its data does: a file cut short or a gzip stream cut
// short (an interrupted download or copy, a full disk, a process killed
// while writing). errors.Is(err, ErrTruncated) tells it from other bad
// input.
var ErrTruncated = errors.New("file ends early: the dump is truncated")

// Caps on the dump-derived parts of a FormatError's message.
const (
	maxSectionBytes = 100
	maxMsgBytes     = 2 << 10
)

// Unwrap returns the cause, if any.
func (e *FormatError) Unwrap() error { return e.Err }

func (e *FormatError) Error() string {
	file := termtext.Clean(e.File)
	if file == "" {
		file = "<input>"
	}
	where := ""
	if e.Section != "" {
		where = " " + termtext.Cap(e.Section, maxSectionBytes) + ":"
	}
	msg := termtext.Cap(e.Msg, maxMsgBytes)
	if e.Offset >= 0 {
		return fmt.Sprintf("%s:%s byte %d: %s", file, where, e.Offset, msg)
	}
	return fmt.Sprintf("%s:%s %s", file, where, msg)
}
