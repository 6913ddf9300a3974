package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/jstrace"
)

// exitStatus is an error that ends heapx with the given exit code and no
// message: heapx trace passes the traced program's exit status through.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func newTraceCmd(stderr *os.File) *cobra.Command {
	var out string
	var include []string
	var withReport bool
	c := &cobra.Command{
		Use:   "trace [-o FILE] [--include GLOB] -- node app.js [args]",
		Short: "Run a Node.js program with its JavaScript instrumented and record its memory trace (allocations, writes, last uses)",
		Long: `Run a Node.js program with its JavaScript instrumented as it loads and
record a memory trace: every allocation, reference write, call and each
object's last use, with positions in the original files (MemInsight's
trace; docs/trace.md). CommonJS and ES modules are instrumented, files in
node_modules only when they match --include. The program's output and exit
status are its own; it runs several times slower.

The trace is written to FILE (default: the script's name with .hxtrace)
as it streams in (the program sends what it recorded at least every
tenth of a second), and renamed into place when the program has ended,
however it ended: its event loop ran out, it called process.exit or
threw, a signal ended it (Ctrl-C, SIGTERM or SIGHUP, sent to the
program, to heapx or to both: heapx passes it on only when the program
did not get it), or it was killed (only its last fraction of a second is
lost). heapx then says how it ended. What the trace cannot show (eval'd
code, worker threads, child processes, uninstrumented modules) is
recorded as such. Servers are traced as they run: leave one under real
requests for a while, stop it, and heapx trace-leaks (or --report) says
which allocation sites leak.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 0 || len(args) == 0 {
				return errors.New("trace needs a program to run after --, as in heapx trace -- node app.js")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				out = jstrace.DefaultPath(args)
			}
			err := runTrace(cmd.Context(), args, out, include, cmd.OutOrStdout(), stderr)
			var status exitStatus
			if withReport && (err == nil || errors.As(err, &status)) {
				if rerr := printLifetimes(cmd.OutOrStdout(), stderr, out); rerr != nil {
					return rerr
				}
			}
			return err
		},
	}
	f := c.Flags()
	f.StringVarP(&out, "output", "o", "", "write the trace to `FILE` (default: the script's name with .hxtrace)")
	f.BoolVar(&withReport, "report", false, "when the program has ended, print what heapx lifetimes says of the trace")
	f.StringArrayVar(&include, "include", nil, "also instrument files matching `GLOB` (** any path, * any name part), e.g. '**/node_modules/mylib/**'")
	return c
}

func runTrace(ctx context.Context, argv []string, out string, include []string, stdout io.Writer, stderr *os.File) error {
	if ctx == nil {
		ctx = context.Background()
	}
	// heapx stays to finish the file with what the program did: the
	// signals that would end heapx are passed to the program instead
	// (from a terminal or to the process group they reach it too, and
	// are not passed twice).
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	res, err := jstrace.RunFile(ctx, argv, jstrace.Options{Include: include, Stdin: os.Stdin, Stdout: stdout, Stderr: stderr, Signals: sigs}, out)
	if err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	fmt.Fprintf(stderr, "heapx: wrote %s (%s); the program %s\n", out, humanize.Size(uint64(res.Bytes)), res.Ended())
	switch {
	case res.Signal != 0:
		return exitStatus(128 + res.Signal)
	case res.ExitCode != 0:
		return exitStatus(res.ExitCode)
	}
	return nil
}
