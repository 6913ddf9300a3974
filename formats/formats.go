// Package formats is the registry of heap-dump formats: the one way heapx
// opens or writes a dump. Each format lives in its own package under
// formats/ and registers itself from an init function with a detector
// (magic bytes, then file extension) and a reader, plus a writer when the
// format can be written. Adding a format is adding one package and one
// blank import in the command; nothing else changes. The package (see
// formats/v8, formats/spidermonkey):
//
//   - calls Register from init with a Name, its Extensions and a Detect
//     strict enough not to claim other formats' heads (the registry
//     breaks ties by extension);
//   - reads with ReadFile (and ProgressReader) straight into the model's
//     columns (model.Alloc, model.Grow, model.IDMap), returning a
//     FormatError with the byte offset for bad input, never panicking;
//   - sets ReadStream too when it reads in one pass, so a dump can come
//     from a pipe (OpenInput);
//   - has a FuzzRead target seeded from a small real dump, and tests that
//     compare what it reads with the runtime's own tools.
//
// The command imports it blank in cmd/heapx/load.go.
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
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

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

// detectHead finds the format of the file at path whose first bytes
// (decompressed) are head.
func detectHead(path string, head []byte) (*Format, error) {
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
		names := []string{}
		for _, f := range All() {
			names = append(names, f.Name)
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
	raw, err := readPrefix(path, 2)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Input{Path: path, Format: f, Size: st.Size(), Gzip: IsGzip(raw)}, nil
}

// openStream is OpenInput for input that can be read only once.
func openStream(path string) (*Input, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	rec := &recorder{r: file}
	head, err := Head(rec)
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
	return &Input{Path: path, Format: f, Size: -1, Gzip: IsGzip(rec.b), file: file,
		stream: &countReader{r: io.MultiReader(bytes.NewReader(rec.b), file)}}, nil
}

// Read reads the dump; it can be called once.
func (in *Input) Read(opt ReadOptions) (*model.Graph, error) {
	if in.stream == nil {
		return in.Format.Read(in.Path, opt)
	}
	g, err := in.Format.ReadStream(in.stream, -1, in.Path, opt)
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
	gz := strings.HasSuffix(strings.ToLower(path), ".gz")
	switch {
	case f.WriteFile != nil:
		if gz {
			return fmt.Errorf("%s: format %s cannot be gzip-compressed (drop the .gz)", path, f.Name)
		}
		return WriteFileAtomic(path, func(tmp string) error { return f.WriteFile(tmp, g, opt) })
	case f.Write != nil:
		return WriteFileAtomic(path, func(tmp string) error {
			out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				return err
			}
			var w io.Writer = out
			var zw *GzipWriter
			if gz {
				zw = NewGzipWriter(out)
				w = zw
			}
			err = f.Write(w, g, opt)
			if zw != nil {
				if cerr := zw.Close(); err == nil {
					err = cerr
				}
			}
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			return err
		})
	}
	return fmt.Errorf("format %s cannot be written", f.Name)
}

// WriteFileAtomic creates a temporary file next to path, lets write fill it
// (by name), and renames it over path only if write succeeds, so an
// interrupted or failed write never leaves a file that looks complete.
func WriteFileAtomic(path string, write func(tmp string) error) (err error) {
	dir := filepath.Dir(path)
	// Creating and registering the file is one step for RemoveTemps: a
	// signal between the two would otherwise leave the file behind.
	tempsMu.Lock()
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		tempsMu.Unlock()
		return err
	}
	tmp := f.Name()
	f.Close()
	temps.Store(tmp, true)
	tempsMu.Unlock()
	defer func() {
		temps.Delete(tmp)
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if err := write(tmp); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
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
// half-written temporary file.
func RemoveTemps() {
	tempsMu.Lock()
	defer tempsMu.Unlock()
	temps.Range(func(k, _ any) bool {
		os.Remove(k.(string))
		return true
	})
}

// readHead returns up to HeadSize bytes of the file, decompressed when it
// is gzip.
func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Head(f)
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
type FormatError struct {
	File    string
	Section string
	Offset  int64 // -1 when the problem is not tied to one position
	Msg     string
}

func (e *FormatError) Error() string {
	file := e.File
	if file == "" {
		file = "<input>"
	}
	where := ""
	if e.Section != "" {
		where = " " + e.Section + ":"
	}
	if e.Offset >= 0 {
		return fmt.Sprintf("%s:%s byte %d: %s", file, where, e.Offset, e.Msg)
	}
	return fmt.Sprintf("%s:%s %s", file, where, e.Msg)
}
