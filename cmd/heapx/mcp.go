package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	hx "github.com/heapx/heapx"
	"github.com/heapx/heapx/mcpserver"
	"github.com/heapx/heapx/session"
)

func newMCPCmd(stderr *os.File) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp [FILE [BASELINE...]]",
		Short: "Answer an agent's questions about dumps: a Model Context Protocol server on stdio",
		Long: `Serve heapx's analyses to an AI agent or another MCP client, as tools, over
the Model Context Protocol on stdin and stdout: open a dump, the overview,
the classes, an object's paths from the roots, leaks and comparison of a
series, SQL, and every analysis of 'heapx list'. Answers are small pages
with a cursor to the next, so an agent can investigate a large dump
without reading it; dumps are read once and kept.

FILE (with the earlier snapshots BASELINE..., oldest first) is read and
analysed before the server answers, and is the dump the tools ask about
by default; the agent opens others with the open tool. A memory trace
written by heapx trace is opened as heapx serve opens it: its lifetime
analyses (heapx list, group lifetimes) are the queries, overview is its
report. Progress and
errors go to stderr; stdout carries only the protocol. See docs/cli.md
("heapx mcp") for a client's configuration.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			srv := mcpserver.New(mcpserver.Options{
				// The root --binary and --no-source-maps reach the
				// reads through load and mapOptions; the open tool's
				// binary comes in dump.
				Open: func(file string, baselines []string, dump hx.Options) (*session.Session, error) {
					args := append([]string{file}, baselines...)
					if isMemoryTrace(file) {
						// Its lifetime analyses, as heapx serve gives them.
						return openTraceSession(args, stderr)
					}
					return openSession(args, dump.Binary, mcpserver.OpenSeries, stderr)
				},
				Version: buildVersion(),
				Log:     stderr,
			})
			defer srv.Close()
			if len(args) > 0 {
				if _, err := srv.Open(args[0], args[1:], ""); err != nil {
					return err
				}
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer stop()
			// One line that is not a request is answered with an error,
			// not the end of the session (mcpserver.LineTransport).
			err := srv.Run(ctx, &mcpserver.LineTransport{In: os.Stdin, Out: os.Stdout, Log: stderr})
			if ctx.Err() != nil {
				return nil // stopped by a signal
			}
			return err
		},
	}
}
