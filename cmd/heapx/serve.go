package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

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
			serve.LimitMemory()
			ln, err := serve.Listen(addr, serve.Options{ErrorLog: log.New(stderr, "heapx: ", 0)})
			if err != nil {
				return fmt.Errorf("--http %s: %w", addr, err)
			}
			if ln.Exposed != "" {
				fmt.Fprintf(stderr, "heapx: warning: serving on %s, which other machines may reach: anyone with the address below (its token included) can read everything the dump holds\n", ln.Exposed)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "heapx: serving %s at %s (Ctrl-C to stop)\n", args[0], ln.URL)
			if !noBrowser && term.IsTerminal(int(os.Stdout.Fd())) {
				if err := serve.OpenBrowser(ln.URL); err != nil {
					// A note: the address is printed anyway.
					fmt.Fprintf(stderr, "heapx: could not open a browser (%v); open the address above\n", err)
				}
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer stop()
			return ln.Serve(ctx, s)
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
