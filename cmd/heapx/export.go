package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	hx "github.com/heapx/heapx"
	"github.com/heapx/heapx/analysis/leak"
	"github.com/heapx/heapx/fleet"
	"github.com/heapx/heapx/formats/parquet"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/internal/progress"
	"github.com/heapx/heapx/query"
)

func newExportCmd(stderr *os.File) *cobra.Command {
	var dir string
	var labels []string
	var jobs int
	var leaks bool
	c := &cobra.Command{
		Use:   "export --parquet DIR [--leaks] DUMP...",
		Short: "Export many heap dumps, analysed, to a Parquet directory for fleet queries",
		Long: `Export the heap dumps DUMP... (any format heapx reads) into DIR, the
Parquet form of the exchange format (docs/format.md, section 10): one
partition DIR/dump=<id> per dump, with its objects (retained sizes,
dominators, distances, classes), references, classes and leak suspects,
for DuckDB (heapx sql), Spark or Trino to query across dumps.

Dumps are analysed on every core, one dump per worker at a time (--jobs),
so memory stays that of --jobs dumps. The dump id is the start of the
SHA-256 of the file's bytes: a dump whose partition DIR has already is
skipped, so exporting a growing set of dumps into one DIR again writes
only the new ones. Labels (--label service=api --label release=42) go to
the dumps and labels tables, for selecting dumps by service or release.

Each partition is written into a hidden temporary directory and renamed
into place when complete: an interrupted export leaves every partition
complete or absent (the next export removes what it left). One export at a
time per DIR.

With --leaks, the dumps are BASELINE TARGET FINAL, one series of one
process oldest first, as heapx leaks takes them: all three are exported,
and FINAL's partition gets the leaks table too, the leak clusters heapx
leaks -n 0 finds in them (default options). FINAL must not be in DIR yet:
a partition is never rewritten.

heapx summary DIR/dump=<id> (and every other command) reads a partition
back like a dump file.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				return errors.New("export needs --parquet DIR, the directory to write (see heapx export --help)")
			}
			if len(args) == 0 {
				return errors.New("export needs at least one DUMP to export (see heapx export --help)")
			}
			if leaks && len(args) != 3 {
				return fmt.Errorf("export --leaks needs three dumps, BASELINE TARGET FINAL (oldest first), not %d", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ls, err := parseLabels(labels)
			if err != nil {
				return err
			}
			return export(cmd.OutOrStdout(), stderr, dir, args, ls, jobs, leaks)
		},
	}
	c.Flags().StringVar(&dir, "parquet", "", "the Parquet directory to write (created if missing)")
	c.Flags().StringArrayVar(&labels, "label", nil, "a KEY=VALUE label for every dump of this export (repeatable)")
	c.Flags().BoolVar(&leaks, "leaks", false, "the dumps are BASELINE TARGET FINAL: add their leaks table to FINAL's partition")
	c.Flags().IntVar(&jobs, "jobs", runtime.GOMAXPROCS(0), "dumps analysed at once (each holds one dump in memory)")
	return c
}

// parseLabels turns --label KEY=VALUE flags into labels, in order.
func parseLabels(flags []string) ([]parquet.Label, error) {
	var out []parquet.Label
	seen := map[string]bool{}
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--label %q: want KEY=VALUE, such as --label service=api", f)
		}
		if seen[k] {
			return nil, fmt.Errorf("--label %s given twice", k)
		}
		seen[k] = true
		out = append(out, parquet.Label{Key: k, Value: v})
	}
	return out, nil
}

func export(stdout io.Writer, stderr *os.File, dir string, dumps []string, labels []parquet.Label, jobs int, leaks bool) error {
	if jobs < 1 {
		return fmt.Errorf("--jobs %d: want at least 1", jobs)
	}
	defer cleanUpOnInterrupt(stderr, "")()
	start := time.Now()
	bar := progress.Start(stderr, fmt.Sprintf("exporting %d dumps", len(dumps)), -1)
	opened := hx.Options{Binary: binaryFor(stderr)}
	mapOptions(stderr, &opened)
	results, err := fleet.Export(dir, dumps, fleet.Options{Dump: opened, Labels: labels, Jobs: jobs, Leaks: leaks, Generator: generator(),
		Progress: bar.Update,
		Warn:     func(ws []query.Warning) { warnOnStderr(stderr, ws) },
		Command:  func(p []string) string { return "heapx export --parquet " + dir + " --leaks " + strings.Join(p, " ") },
		Digest:   func(path string, prev *leak.Digest) (*leak.Digest, error) { return loadDigest(path, prev, stderr) }})
	bar.Done()
	if err != nil {
		return err
	}
	var failed, wrote, skipped int
	var bytes int64
	for _, r := range results {
		switch {
		case r.Err != nil:
			failed++
			fmt.Fprintf(stderr, "heapx: %v\n", r.Err)
		case r.Skipped:
			skipped++
			fmt.Fprintf(stdout, "skipped %s: dump=%s is in %s already\n", r.Path, r.ID, dir)
		default:
			wrote++
			bytes += r.Size
			fmt.Fprintf(stdout, "wrote %s: %s nodes from %s\n", parquet.PartitionDir(dir, r.ID), humanize.Thousands(uint64(r.Nodes)), r.Path)
		}
	}
	secs := time.Since(start).Seconds()
	fmt.Fprintf(stdout, "exported %d of %d dumps (%d skipped, %d failed) in %.2f s: %.2f dumps/s, %.1f MB/s\n",
		wrote, len(dumps), skipped, failed, secs, float64(wrote)/secs, float64(bytes)/1e6/secs)
	if failed > 0 {
		return fmt.Errorf("%d of %d dumps not exported", failed, len(dumps))
	}
	return nil
}
