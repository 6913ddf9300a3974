package main

import (
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	hx "github.com/heapx/heapx"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/render"
)

func newInfoCmd(stderr *os.File) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "info FILE",
		Short: "Show what a heap dump holds: format, counts, sizes by node type",
		Long: `Show what a heap dump holds: its format and producer, node, edge and
string counts, the total self size, node counts and self sizes by node type
and by neutral category, and which optional sections are present.

With --json the same facts are printed as one JSON object (docs/json.md
lists the fields).`,
		Args: oneFile,
		RunE: func(cmd *cobra.Command, args []string) error {
			// The edges are counted, not kept: info reports nothing
			// else of them, and they are most of a dump's memory.
			d, err := load(args[0], stderr, hx.Options{Stored: hx.SkipStored, NodesOnly: true})
			if err != nil {
				return err
			}
			info := d.Info()
			if asJSON {
				return render.WriteJSON(cmd.OutOrStdout(), info)
			}
			return writeInfo(cmd.OutOrStdout(), info)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON object instead of text")
	return c
}

// writeInfo prints info as text: a key/value block, then the two census
// tables.
func writeInfo(w io.Writer, info *hx.Info) error {
	yesNo := func(b bool, detail string) string {
		if !b {
			return "no"
		}
		if detail == "" {
			return "yes"
		}
		return "yes (" + detail + ")"
	}
	kv := render.NewTextTable("", "")
	kv.Add("File", fmt.Sprintf("%s (%s, %s)", info.File, humanize.Size(uint64(info.FileSize)), info.Compression))
	kv.Add("Format", info.Format)
	kv.Add("Producer", info.Producer)
	kv.Add("Nodes", humanize.Thousands(uint64(info.NodeCount)))
	kv.Add("Edges", humanize.Thousands(uint64(info.EdgeCount)))
	kv.Add("Strings", humanize.Thousands(uint64(info.StringCount)))
	kv.Add("Total self size", fmt.Sprintf("%s (%s bytes)", humanize.Size(info.TotalSelfSize), humanize.Thousands(info.TotalSelfSize)))
	kv.Add("Locations", yesNo(info.HasLocations, humanize.Thousands(uint64(info.LocationCount))))
	kv.Add("Allocation trace", yesNo(info.HasAllocationTrace, ""))
	kv.Add("Detachedness", yesNo(info.HasDetachedness, humanize.Thousands(uint64(info.DetachedNodeCount))+" detached"))
	kv.Add("Thread stacks", yesNo(info.ThreadCount > 0, humanize.Thousands(uint64(info.ThreadCount))+" threads: heapx stack"))
	kv.Add("Read time", strconv.FormatFloat(info.ReadSeconds, 'f', 2, 64)+" s")
	if err := kv.WriteRows(w); err != nil {
		return err
	}

	fmt.Fprintln(w)
	types := render.NewTextTable("Node type", "Category", ">Count", ">Self size", ">%")
	for _, t := range info.NodeTypes {
		types.Add(t.Type, t.Category, humanize.Thousands(t.Count), humanize.Size(t.SelfSize), humanize.Percent(t.SelfSize, info.TotalSelfSize))
	}
	if err := types.Write(w); err != nil {
		return err
	}

	fmt.Fprintln(w)
	cats := render.NewTextTable("Category", ">Count", ">Self size", ">%")
	for _, c := range info.Categories {
		cats.Add(c.Category, humanize.Thousands(c.Count), humanize.Size(c.SelfSize), humanize.Percent(c.SelfSize, info.TotalSelfSize))
	}
	return cats.Write(w)
}
