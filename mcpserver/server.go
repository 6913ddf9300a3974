// Package mcpserver is heapx's Model Context Protocol server: the
// questions heapx serve's web view answers, asked by an agent as tools.
// An agent opens a dump (or a series of snapshots of one program), then
// asks for the overview, a page of classes, an object's paths from the
// roots, the leaks of the series, SQL, or any query of the registry by
// name. Every answer is a small page in the shapes of heapx's --json
// output and serve's /api/v1/ (package session), with a cursor to the
// next page, so an agent can investigate a dump of a gigabyte without
// reading it.
//
// Dumps are read and analysed once and kept until the server stops (or
// the agent closes them); the server only reads them.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/heapx/heapx"
	"github.com/heapx/heapx/formats/memtrace"
	"github.com/heapx/heapx/internal/admit"
	"github.com/heapx/heapx/session"
)

// OpenSeries is what a request that needs earlier snapshots tells the
// agent to do (session.Options.OpenSeries).
const OpenSeries = "call open with file and baselines (earlier snapshots of the same program, oldest first)"

// Options tune a Server.
type Options struct {
	// Open reads and analyses file and its baselines (oldest first) with
	// the facade's options dump (Dump, with the binary the open tool was
	// given) and opens a session on them, ready to answer
	// (session.Session.Prepare); nil opens with session.Open
	// (session.OpenTrace for a memory trace), silently. The command line
	// passes its own, which shows progress on stderr.
	Open func(file string, baselines []string, dump heapx.Options) (*session.Session, error)
	// Dump is how dumps are read (heapx.Options): Binary is the node
	// executable a Node.js core's process ran, when the open tool is not
	// given one (heapx mcp --binary); NoSourceMaps turns source maps off.
	Dump heapx.Options
	// Version is the version the server gives in its handshake.
	Version string
	// Log receives what an agent does not see: the stack of a failure
	// of heapx while answering. Nil discards it.
	Log io.Writer
	// Limits bound the calls of each heavy class (admit's: paths, the
	// dominator tree, queries, SQL, opening a dump) running and waiting
	// at once, as heapx serve's requests are: an agent's calls run
	// concurrently, and a refused one is a tool error saying when to call
	// again. Nil is admit.Defaults.
	Limits map[string]admit.Limit
}

// Server is the MCP server and the dumps it holds open.
type Server struct {
	opt   Options
	mcp   *mcp.Server
	gates map[string]*admit.Gate // by class (toolClass)

	mu    sync.Mutex
	dumps []*dump // open or being opened, in the order they were asked for
	last  *dump   // the dump a call without "dump" asks about
	seq   int     // numbers dump ids
}

// dump is one opened file with its baselines.
type dump struct {
	id        string
	file      string
	baselines []string
	key       string // the absolute paths, which identify a series

	once  sync.Once
	s     *session.Session
	err   error
	ready bool // s is open; guarded by Server.mu, as s and err are not
}

// New returns a server with heapx's tools and no dump open.
func New(opt Options) *Server {
	if opt.Open == nil {
		opt.Open = func(file string, baselines []string, dump heapx.Options) (*session.Session, error) {
			if memtrace.IsTrace(file) && len(baselines) == 0 {
				return session.OpenTrace(file, session.Options{Dump: dump})
			}
			s, err := session.Open(file, baselines, session.Options{OpenSeries: OpenSeries, Dump: dump})
			if err != nil {
				return nil, err
			}
			return s, s.Prepare()
		}
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	if opt.Version == "" {
		opt.Version = "(devel)"
	}
	if opt.Limits == nil {
		opt.Limits = admit.Defaults()
	}
	s := &Server{opt: opt, gates: admit.Gates(opt.Limits)}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "heapx", Title: "heapx heap dump analysis", Version: opt.Version},
		&mcp.ServerOptions{Instructions: instructions})
	s.addTools()
	return s
}

// instructions tell an agent how to use the tools, in the handshake.
const instructions = `heapx analyses heap dumps: V8 (.heapsnapshot from Node.js, Chrome, Electron), Firefox (.fxsnapshot), Java HPROF (.hprof), heapx's .jsonl/.db and Parquet partitions (dump=<id>), and Node.js core dumps (open's binary names the node executable).
Start with open (or use the dump the server was started with), then overview for the report (leaks, suspects, largest objects), summary for the classes, paths to see what keeps an object alive, leaks and diff for a series of snapshots.
Sizes are in bytes. Object ids are written as heapx and DevTools write them: "12345" or "@12345" for V8, "0x7f3a10" for addresses (Java, Firefox); the decimal ids in answers work too.
Lists are paged: pass an answer's next_cursor as cursor for the next page.`

// MCP returns the protocol server, for a transport of the caller's
// choice (tests connect it in memory).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Run serves one client on t (mcp.StdioTransport for heapx mcp) until it
// disconnects or ctx is done.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	return s.mcp.Run(ctx, t)
}

// Open opens file with its baselines (oldest first), or returns the dump
// already open on them, and makes it the dump calls without "dump" ask
// about. heapx mcp FILE... opens its arguments with it before serving.
// binary is the node executable of a Node.js core ("": Options.Dump's).
func (s *Server) Open(file string, baselines []string, binary string) (*DumpJSON, error) {
	d, err := s.open(file, baselines, binary)
	if err != nil {
		return nil, err
	}
	return d.describe(), nil
}

func (s *Server) open(file string, baselines []string, binary string) (*dump, error) {
	if strings.TrimSpace(file) == "" {
		return nil, &session.Error{Kind: session.Invalid, Msg: "open needs the path of a heap dump (file)"}
	}
	key, err := seriesKey(append([]string{file}, baselines...))
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	var d *dump
	for _, o := range s.dumps {
		if o.key == key {
			d = o
		}
	}
	if d == nil {
		s.seq++
		d = &dump{id: fmt.Sprintf("d%d", s.seq), file: file, baselines: append([]string{}, baselines...), key: key}
		s.dumps = append(s.dumps, d)
	}
	s.mu.Unlock()
	d.once.Do(func() {
		defer func() {
			// A reader's bug is the failure of this open, not a
			// dump left half open.
			if r := recover(); r != nil {
				fmt.Fprintf(s.opt.Log, "heapx: opening %s failed: %v\n%s", file, r, debug.Stack())
				d.s, d.err = nil, fmt.Errorf("heapx failed to open %s (a bug; the server goes on): %v", file, r)
			}
		}()
		dump := s.opt.Dump
		if binary != "" {
			dump.Binary = binary
		}
		d.s, d.err = s.opt.Open(file, baselines, dump)
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.err != nil {
		// Forgotten, so that the agent can open it again once the file
		// is fixed or the path corrected.
		s.forget(d)
		return nil, d.err
	}
	d.ready = true
	s.last = d
	return d, nil
}

// seriesKey identifies a series by its files' absolute paths.
func seriesKey(paths []string) (string, error) {
	abs := make([]string, len(paths))
	for i, p := range paths {
		a, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		abs[i] = a
	}
	return strings.Join(abs, "\x00"), nil
}

// forget drops d from the open dumps; s.mu is held.
func (s *Server) forget(d *dump) {
	for i, o := range s.dumps {
		if o == d {
			s.dumps = append(s.dumps[:i], s.dumps[i+1:]...)
			break
		}
	}
	if s.last == d {
		s.last = nil
		for i := len(s.dumps) - 1; i >= 0 && s.last == nil; i-- {
			if s.dumps[i].ready {
				s.last = s.dumps[i]
			}
		}
	}
}

// session returns the session of the dump ref names: its id ("d1"), or
// the path of its file; "" names the one opened last.
func (s *Server) session(ref string) (*session.Session, error) {
	d, err := s.dump(ref)
	if err != nil {
		return nil, err
	}
	return d.s, nil
}

func (s *Server) dump(ref string) (*dump, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ref = strings.TrimSpace(ref)
	if ref == "" {
		if s.last == nil {
			return nil, &session.Error{Kind: session.NotFound, Msg: "no dump is open: call open with the path of a heap dump"}
		}
		return s.last, nil
	}
	abs, _ := filepath.Abs(ref)
	for _, d := range s.dumps {
		if !d.ready {
			continue // still being opened
		}
		if d.id == ref || d.file == ref || strings.SplitN(d.key, "\x00", 2)[0] == abs {
			return d, nil
		}
	}
	var open []string
	for _, d := range s.dumps {
		if d.ready {
			open = append(open, d.id+" ("+d.file+")")
		}
	}
	if len(open) == 0 {
		return nil, &session.Error{Kind: session.NotFound, Msg: fmt.Sprintf("no dump %q is open, and none is: call open with the path of a heap dump", ref)}
	}
	return nil, &session.Error{Kind: session.NotFound, Msg: fmt.Sprintf("no dump %q is open; open are %s", ref, strings.Join(open, ", "))}
}

// close closes the dump ref names and forgets it.
func (s *Server) close(ref string) (*DumpJSON, error) {
	d, err := s.dump(ref)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.forget(d)
	s.mu.Unlock()
	desc := d.describe()
	// What the dump's analysis held goes back to the system now: an
	// agent closes a dump to make room for the next.
	defer debug.FreeOSMemory()
	return desc, d.s.Close()
}

// Close closes every dump (deleting the SQL console's temporary copies).
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, d := range s.dumps {
		if d.ready {
			errs = append(errs, d.s.Close())
		}
	}
	s.dumps, s.last = nil, nil
	return errors.Join(errs...)
}

// DumpJSON names an open dump: its id, which calls pass as "dump", and
// its snapshots.
type DumpJSON struct {
	Dump string `json:"dump"`
	File string `json:"file"`
	// Baselines are the earlier snapshots, oldest first.
	Baselines []string `json:"baselines"`
	Runtime   string   `json:"runtime"`
	Nodes     int      `json:"nodes"`
	TotalSize uint64   `json:"total_size"`
}

func (d *dump) describe() *DumpJSON {
	info := d.s.Info()
	return &DumpJSON{Dump: d.id, File: d.file, Baselines: d.baselines, Runtime: info.Runtime, Nodes: info.Inputs[0].Nodes, TotalSize: info.TotalSize}
}
