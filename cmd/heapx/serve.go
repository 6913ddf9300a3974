package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	hsql "github.com/heapx/heapx/formats/sqlite"
	"github.com/heapx/heapx/internal/progress"
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/report"
	"github.com/heapx/heapx/serve"
	"github.com/heapx/heapx/session"
)

func newServeCmd(stderr *os.File) *cobra.Command {
	var addr string
	var noBrowser bool
	c := &cobra.Command{
		Use:   "serve FILE [BASELINE...] | serve TRACE",
		Short: "Explore a dump in the browser: overview, classes, retainers, dominators, comparison, SQL",
		Long: `Read and analyse FILE (and the earlier snapshots BASELINE..., oldest first,
for the comparison, leaks and growth) once, then serve an interactive view
of it: the report's overview, the classes with their instances, an
object's references, retainers and retainer paths, the dominator tree,
the comparison with the last baseline, every analysis of 'heapx list',
and an SQL console. Given a memory trace written by heapx trace instead,
it serves the trace's lifetime analyses: heapx report TRACE's overview,
the lifetime queries of 'heapx list' and the timeline as a chart. The page and its JSON API (/api/v1/, see docs/web-api.md) are
served by heapx itself; nothing is loaded from elsewhere.

The server listens on 127.0.0.1 on a free port unless --http says
otherwise, prints its address and, when stdout is a terminal, opens it
in the browser (--no-browser to not). An address other machines can
reach gets a random token the address carries, and a warning: anyone with
the address sees everything in the dump. Ctrl-C stops the server.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("serve needs a FILE argument (see heapx serve --help)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var s *session.Session
			var err error
			if isMemoryTrace(args[0]) {
				s, err = openTraceSession(args, stderr)
			} else {
				s, err = openSession(args, "", "", stderr)
			}
			if err != nil {
				return err
			}
			limitMemory()
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("--http %s: %w", addr, err)
			}
			defer ln.Close()
			opt := serve.Options{ErrorLog: log.New(stderr, "heapx: ", 0)}
			tcp := ln.Addr().(*net.TCPAddr)
			url := "http://" + ln.Addr().String() + "/"
			if tcp.IP.IsLoopback() {
				opt.Hosts = serve.LoopbackHosts(ln.Addr())
			} else {
				opt.Token = randomToken()
				where := ln.Addr().String()
				if tcp.IP.IsUnspecified() {
					// Every address of the machine: the address to
					// give is the machine's name.
					host, _ := os.Hostname()
					if host == "" {
						host = "localhost"
					}
					where = net.JoinHostPort(addrHost(addr), strconv.Itoa(tcp.Port)) + " (every address of this machine)"
					url = "http://" + net.JoinHostPort(host, strconv.Itoa(tcp.Port)) + "/"
				}
				url += "?token=" + opt.Token
				fmt.Fprintf(stderr, "heapx: warning: serving on %s, which other machines may reach: anyone with the address below (its token included) can read everything the dump holds\n", where)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "heapx: serving %s at %s (Ctrl-C to stop)\n", args[0], url)
			if !noBrowser && term.IsTerminal(int(os.Stdout.Fd())) {
				openBrowser(url, stderr)
			}
			srv := &http.Server{Handler: serve.Handler(s, opt), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
				ErrorLog: log.New(io.Discard, "", 0)}
			stop := make(chan os.Signal, 1)
			signal.Notify(stop, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer signal.Stop(stop)
			done := make(chan error, 1)
			go func() { done <- srv.Serve(ln) }()
			select {
			case err := <-done:
				return err
			case <-stop:
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				srv.Shutdown(ctx)
				return nil
			}
		},
	}
	c.Flags().StringVar(&addr, "http", "127.0.0.1:0", "listen on `HOST:PORT` (port 0: a free one)")
	c.Flags().BoolVar(&noBrowser, "no-browser", false, "do not open the browser")
	return c
}

// openSession reads and analyses the snapshots (the file, then its
// baselines) and prepares the session's views, with progress on stderr.
// binary is a core's node executable ("": the root --binary);
// openSeries is session.Options.OpenSeries.
func openSession(args []string, binary, openSeries string, stderr *os.File) (*session.Session, error) {
	file, baselines, err := loadSeries(args, binary, stderr)
	if err != nil {
		return nil, err
	}
	s, err := session.New(file, baselines, session.Options{
		SaveSQL: func(source, target string, g *model.Graph, opt hsql.WriteOptions, temp bool) error {
			return writeCopy(source, target, g, opt, temp, stderr)
		},
		OpenSeries: openSeries,
	})
	if err != nil {
		return nil, err
	}
	// The page shows them first; the terminal too.
	warnOnStderr(stderr, s.Info().Warnings)
	spin := progress.Start(stderr, "preparing the views", -1)
	err = s.Prepare()
	spin.Done()
	// What preparing the report used and dropped goes back to the
	// system now, not when the next garbage collection of a heap this
	// size comes, which a server that only reads may never reach.
	debug.FreeOSMemory()
	return s, err
}

// limitMemory sets the soft memory limit of a server holding a dump: what
// is live once it is ready, and half as much again for the requests (at
// least 512 MB). A server keeps the analysis (most of its heap) for
// hours, and Go's collector lets a heap grow to twice what is live before
// it collects: under many requests the garbage alone would double the
// server's memory (a 1 GB snapshot's server went from 1.7 to 3.4 GB
// with requests bounded by serve's limits). At the limit the collector
// works harder instead. GOMEMLIMIT, when set, is left to decide.
func limitMemory() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	live := ms.HeapAlloc
	debug.SetMemoryLimit(int64(live + max(live/2, 512<<20)))
}

// openTraceSession opens the session on a memory trace (heapx trace):
// its lifetime analyses, which the page shows in place of a snapshot's
// views, as heapx report TRACE does.
func openTraceSession(args []string, stderr *os.File) (*session.Session, error) {
	if len(args) > 1 {
		return nil, fmt.Errorf("%s is a memory trace, which is served alone: a trace has no baselines (give BASELINEs with a heap snapshot)", args[0])
	}
	spin := progress.Start(stderr, "analysing the object lifetimes", -1)
	var opt session.Options
	mapOptions(stderr, &opt.Dump)
	s, err := session.OpenTrace(args[0], opt)
	var doc *report.Doc
	if err == nil {
		doc, err = s.Report()
	}
	spin.Done()
	if err != nil {
		return nil, err
	}
	// What the trace did not see, as heapx report TRACE says it.
	warnOnStderr(stderr, doc.Warnings)
	return s, nil
}

// addrHost is the host part of a --http address as given ("" for ":8080"
// reads as 0.0.0.0).
func addrHost(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return "0.0.0.0"
	}
	return host
}

// randomToken returns 128 random bits in hex.
func randomToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// openBrowser opens url in the desktop's browser, if it has one; a
// failure is a note, since the address is printed anyway.
func openBrowser(url string, stderr io.Writer) {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "heapx: could not open a browser (%v); open the address above\n", err)
		return
	}
	go cmd.Wait()
}
