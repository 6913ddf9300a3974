package main

import (
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	hx "github.com/heapx/heapx"
	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/render"
)

// infoSchemaVersion is the version of the `heapx info --json` object. It
// changes only when a field is removed or changes meaning; adding a field
// does not change it.
const infoSchemaVersion = 1

// infoJSON is the `heapx info --json` output. It is a contract: docs/json.md
// documents every field, so rename nothing.
type infoJSON struct {
	SchemaVersion int    `json:"schema_version"`
	File          string `json:"file"`
	FileSize      int64  `json:"file_size"`
	Compression   string `json:"compression"`
	Format        string `json:"format"`
	Producer      string `json:"producer"`
	// Metadata is every key/value the reader recorded, in order; keys may
	// repeat, so it is a list and not an object.
	Metadata      []metaJSON `json:"metadata"`
	NodeCount     int        `json:"node_count"`
	EdgeCount     int        `json:"edge_count"`
	StringCount   int        `json:"string_count"`
	TotalSelfSize uint64     `json:"total_self_size"`
	NodeTypes     []typeJSON `json:"node_types"`
	Categories    []catJSON  `json:"categories"`

	HasLocations       bool    `json:"has_locations"`
	LocationCount      int     `json:"location_count"`
	HasAllocationTrace bool    `json:"has_allocation_trace"`
	HasDetachedness    bool    `json:"has_detachedness"`
	DetachedNodeCount  int     `json:"detached_node_count"`
	ReadSeconds        float64 `json:"read_seconds"`
	// ThreadCount is how many thread stacks the dump records (a Java
	// heap dump's, a core's): heapx stack and heapx threads show them.
	ThreadCount int `json:"thread_count"`
}

type metaJSON struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type typeJSON struct {
	Namespace string `json:"namespace"`
	Type      string `json:"type"`
	Category  string `json:"category"`
	Count     uint64 `json:"count"`
	SelfSize  uint64 `json:"self_size"`
}

type catJSON struct {
	Category string `json:"category"`
	Count    uint64 `json:"count"`
	SelfSize uint64 `json:"self_size"`
}

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
			info := buildInfo(d)
			if asJSON {
				return render.WriteJSON(cmd.OutOrStdout(), info)
			}
			return writeInfo(cmd.OutOrStdout(), info)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON object instead of text")
	return c
}

// buildInfo gathers the facts info reports.
func buildInfo(d *dump) *infoJSON {
	g := d.Graph()
	info := &infoJSON{
		SchemaVersion: infoSchemaVersion,
		File:          d.Path(),
		FileSize:      d.Size(),
		Compression:   "none",
		Metadata:      []metaJSON{},
		NodeCount:     g.NumNodes(),
		EdgeCount:     d.EdgeCount(),
		StringCount:   g.Strings.Len(),
		HasLocations:  len(g.Locations) > 0,
		LocationCount: len(g.Locations),
		// An empty trace tree means tracking was off even if the
		// (empty) sections were written, as Node does by default.
		HasAllocationTrace: g.Trace != nil && (len(g.Trace.Tree) > 0 || len(g.Trace.Samples) > 0),
		HasDetachedness:    g.Detachedness != nil,
		ReadSeconds:        d.ReadTime().Seconds(),
		ThreadCount:        len(g.Stacks),
	}
	if d.Gzip() {
		info.Compression = "gzip"
	}
	info.Format, _ = g.MetaValue("format")
	info.Producer, _ = g.MetaValue("producer")
	for _, kv := range g.Meta {
		info.Metadata = append(info.Metadata, metaJSON{kv.Key, kv.Value})
	}
	for _, s := range g.Detachedness {
		if s == 2 {
			info.DetachedNodeCount++
		}
	}

	c := analysis.Census(g)
	info.TotalSelfSize = c.TotalSize
	info.NodeTypes = make([]typeJSON, 0, len(c.ByType))
	for _, r := range c.ByType {
		info.NodeTypes = append(info.NodeTypes, typeJSON{r.Type.Namespace, r.Type.Name, r.Type.Category.String(), uint64(r.Count), r.Size})
	}
	info.Categories = make([]catJSON, 0, len(c.ByCategory))
	for _, r := range c.ByCategory {
		info.Categories = append(info.Categories, catJSON{r.Category.String(), uint64(r.Count), r.Size})
	}
	return info
}

// writeInfo prints info as text: a key/value block, then the two census
// tables.
func writeInfo(w io.Writer, info *infoJSON) error {
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
