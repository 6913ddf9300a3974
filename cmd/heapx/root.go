package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/heapx/heapx/query"
)

// version is the release version, set at link time with
// -ldflags "-X main.version=v1.2.3". When it is empty, the module version
// recorded by `go install module@version` is used instead.
var version string

// generator is the generator metadata of the exchange files heapx writes
// (convert, sql's cached copies): it names this build.
func generator() string { return "heapx " + buildVersion() }

// buildVersion returns the version --version prints.
func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// newRootCmd builds the command tree. stderr is where progress bars go; it
// is an *os.File because whether to draw one depends on it being a
// terminal.
func newRootCmd(stderr *os.File) *cobra.Command {
	root := &cobra.Command{
		Use:   "heapx",
		Short: "Find leaks and what holds the memory in heap dumps (V8, Firefox, Java HPROF)",
		Long: `heapx reads heap dumps and reports what is in them and what looks like
a leak. Start with 'heapx report FILE [BASELINE...]'; 'heapx list' shows
every analysis.

It reads V8 heap snapshots (.heapsnapshot, .heaptimeline) as written by
Node.js, Chrome and Electron, Firefox heap snapshots (.fxsnapshot), Java
HPROF dumps (.hprof), and heapx's exchange format (.jsonl, .db), plain or
gzip-compressed, and Node.js core dumps (x86-64 Linux, with --binary).`,
		Version: buildVersion(),
		// Errors are printed by run, once, as "heapx: <error>"; a usage
		// dump after a failed read would bury the message.
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetVersionTemplate("heapx {{.Version}}\n")
	var binary string
	root.PersistentFlags().StringVar(&binary, "binary", "", "the node executable a Node.js core dump's process ran (default: the path the core names)")
	var noSourceMaps bool
	root.PersistentFlags().BoolVar(&noSourceMaps, "no-source-maps", false, "show positions in minified scripts and the minifier's names as the dump has them, without their source maps")
	root.PersistentPreRun = func(*cobra.Command, []string) {
		binaries.Store(stderr, binary)
		sourceMapsOff.Store(stderr, noSourceMaps)
	}
	root.AddCommand(newReportCmd(stderr), newInfoCmd(stderr), newConvertCmd(stderr), newSQLCmd(stderr), newServeCmd(stderr), newMCPCmd(stderr), newListCmd())
	root.AddCommand(newCaptureCmd(stderr), newScenarioCmd(stderr), newSitesCmd(stderr))
	root.AddCommand(newStackCmd(stderr))
	root.AddCommand(newTraceCmd(stderr))
	root.AddCommand(newExportCmd(stderr))
	root.AddCommand(newFleetCmd())
	// Every registered analysis is a command of its own.
	for _, q := range query.All() {
		root.AddCommand(newQueryCmd(q, stderr))
	}
	return root
}

// oneFile is the argument check of every command that reads a dump; it
// says what is missing in the command's own words, where cobra's
// ExactArgs would say "accepts 1 arg(s), received 0".
func oneFile(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("%s needs exactly one FILE argument, got %d (see heapx %s --help)", cmd.Name(), len(args), cmd.Name())
	}
	return nil
}
