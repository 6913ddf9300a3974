package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/heapx/heapx/analysis/leak"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/render"
)

// newQueryCmd makes the command of a registered query: its arguments
// become flags, --json and --csv select the output, and its snapshots are
// loaded and analysed in command-line order before it runs.
func newQueryCmd(q *query.Query, stderr *os.File) *cobra.Command {
	var asJSON, asCSV bool
	c := &cobra.Command{
		Use:   q.Name + " " + q.Usage,
		Short: q.Title,
		Long:  q.Help,
		Args: func(cmd *cobra.Command, args []string) error {
			if n := len(args); n < q.MinInputs || (q.MaxInputs > 0 && n > q.MaxInputs) {
				return fmt.Errorf("%s needs %s, got %d (see heapx %s --help)", q.Name, inputsWanted(q), n, q.Name)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON && asCSV {
				return errors.New("--json and --csv cannot be used together")
			}
			values := map[string]any{}
			for _, a := range q.Args {
				v, err := a.Parse(cmd.Flags().Lookup(a.Name).Value.String())
				if err != nil {
					return fmt.Errorf("--%s: %w", a.Name, err)
				}
				values[a.Name] = v
			}
			return runQuery(cmd, q, args, values, outputForm(asJSON, asCSV), stderr)
		},
	}
	f := c.Flags()
	f.BoolVar(&asJSON, "json", false, "print JSON instead of text")
	f.BoolVar(&asCSV, "csv", false, "print CSV (raw numbers) instead of text")
	for _, a := range q.Args {
		switch a.Kind {
		case query.IntArg:
			f.IntP(a.Name, a.Short, a.Default.(int), a.Help)
		case query.StringArg:
			f.StringP(a.Name, a.Short, a.Default.(string), a.Help)
		case query.BoolArg:
			f.BoolP(a.Name, a.Short, a.Default.(bool), a.Help)
		case query.FloatArg:
			f.Float64P(a.Name, a.Short, a.Default.(float64), a.Help)
		case query.SizeArg:
			f.StringP(a.Name, a.Short, sizeDefault(a.Default.(uint64)), a.Help+" (e.g. 10MB, 512kB, 1GiB)")
		}
		if a.Required {
			if err := c.MarkFlagRequired(a.Name); err != nil {
				panic(err) // the flag is defined just above
			}
		}
	}
	return c
}

// runQuery reads the files at paths as q takes them (memory traces, the
// digests of all but the last, or analysed snapshots), runs q on them with
// values and prints its result in form f; a gate that failed is the
// error.
func runQuery(cmd *cobra.Command, q *query.Query, paths []string, values map[string]any, f render.Format, stderr *os.File) error {
	ctx := &query.Context{Values: values}
	var prev *leak.Digest
	for i, path := range paths {
		if q.Traces {
			t, err := openTrace(path, stderr)
			if err != nil {
				return err
			}
			ctx.Snapshots = append(ctx.Snapshots, query.Snapshot{Path: path, Trace: t})
			continue
		}
		if q.EarlierAsDigests && i < len(paths)-1 {
			// Only the digest is kept: the graph is garbage
			// before the next file is read.
			d, err := loadDigest(path, prev, stderr)
			if err != nil {
				return err
			}
			ctx.Snapshots = append(ctx.Snapshots, query.Snapshot{Path: path, Digest: d})
			prev = d
			continue
		}
		_, a, err := loadAndAnalyze(path, stderr)
		if err != nil {
			return err
		}
		ctx.Snapshots = append(ctx.Snapshots, query.Snapshot{Path: path, Analysis: a})
	}
	r, err := q.Exec(ctx)
	if err != nil {
		return err
	}
	if f != render.Text {
		warnOnStderr(cmd.ErrOrStderr(), r.Warnings)
	}
	if err := render.Write(cmd.OutOrStdout(), r, f, render.Options{Inputs: paths}); err != nil {
		return err
	}
	if r.Failed != "" {
		return errors.New(r.Failed)
	}
	return nil
}

// outputForm is the form --json and --csv select; text without either.
func outputForm(asJSON, asCSV bool) render.Format {
	switch {
	case asJSON:
		return render.JSON
	case asCSV:
		return render.CSV
	}
	return render.Text
}

// warnOnStderr repeats warnings on stderr for output that has no room for
// them (CSV) or is read by a program (JSON, which also has them in its
// "warnings" field), so the person running the command still sees them.
func warnOnStderr(stderr io.Writer, ws []query.Warning) {
	for _, w := range ws {
		fmt.Fprintf(stderr, "heapx: warning: %s\n", w.Message)
	}
}

// sizeDefault shows a size flag's default; 0 reads as "off".
func sizeDefault(n uint64) string {
	if n == 0 {
		return "0"
	}
	return humanize.Size(n)
}

// inputsWanted says how many snapshots a query takes, in words.
func inputsWanted(q *query.Query) string {
	files := strings.Fields(q.Usage)
	var names []string
	for _, f := range files {
		if !strings.HasPrefix(f, "-") && strings.ToUpper(f) == f && f != "ID" && !strings.HasPrefix(f, "[") {
			names = append(names, f)
		}
	}
	switch {
	case q.MinInputs == 1 && q.MaxInputs == 1:
		return "exactly one FILE argument"
	case q.MinInputs == q.MaxInputs:
		return fmt.Sprintf("exactly %d snapshot arguments (%s)", q.MinInputs, strings.Join(names, " "))
	case q.MaxInputs == 0:
		return fmt.Sprintf("at least %d snapshot arguments", q.MinInputs)
	}
	return fmt.Sprintf("%d to %d snapshot arguments", q.MinInputs, q.MaxInputs)
}

// commandsGroup is the group `heapx list` shows the commands that are not
// registered queries under (report, info, convert, sql), first.
const commandsGroup = "commands"

// newListCmd lists the commands: the ones of their own (report, info,
// convert, sql), then the registered queries.
func newListCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "list",
		Short: "List the commands and analyses heapx can run",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			type commandJSON struct {
				Name  string `json:"name"`
				Usage string `json:"usage"`
				Title string `json:"title"`
			}
			var list []query.Descriptor
			commands := []commandJSON{}
			t := render.NewTextTable("Group", "Command", "Description")
			// Sorted by name; the report, the main job, goes first.
			subs := append([]*cobra.Command(nil), cmd.Root().Commands()...)
			sort.SliceStable(subs, func(i, j int) bool { return subs[i].Name() == "report" && subs[j].Name() != "report" })
			for _, sub := range subs {
				if query.Lookup(sub.Name()) != nil || sub == cmd || !sub.IsAvailableCommand() || sub.Name() == "help" || sub.Name() == "completion" {
					continue
				}
				commands = append(commands, commandJSON{Name: sub.Name(), Usage: strings.TrimPrefix(sub.Use, sub.Name()+" "), Title: sub.Short})
				t.Add(commandsGroup, sub.Use, sub.Short)
			}
			for _, q := range query.All() {
				list = append(list, q.Describe())
				t.Add(q.Group, q.Name+" "+q.Usage, q.Title)
			}
			if asJSON {
				return render.WriteJSON(cmd.OutOrStdout(), map[string]any{"schema_version": 1, "commands": commands, "queries": list})
			}
			return t.Write(cmd.OutOrStdout())
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return c
}
