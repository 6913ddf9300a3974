package heapx

import (
	"fmt"
	"io"
	"strconv"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/render"
)

// InfoSchemaVersion is the version of the Info object (heapx info
// --json). It changes only when a field is removed or changes meaning;
// adding a field does not change it.
const InfoSchemaVersion = 1

// Info is what a dump holds, as `heapx info --json` prints it: its file,
// format and producer, counts, the census of its nodes by type and by
// neutral category, and which optional sections it has. Its fields are a
// contract (docs/json.md documents each): add, never rename.
//
// It is built here, in the facade, and not in query or analysis: most of
// it is about the file (its size, compression, read time, the edges
// counted when Options.NodesOnly left them out), which only a Dump knows;
// the graph's part is analysis.Census. Every front end that describes a
// dump (heapx info, the sessions of heapx serve and heapx mcp) takes it
// from Dump.Info, so they say the same.
type Info struct {
	SchemaVersion int    `json:"schema_version"`
	File          string `json:"file"`
	FileSize      int64  `json:"file_size"`
	// Compression is "gzip" or "none".
	Compression string `json:"compression"`
	// Format and Producer are the reader's metadata of those keys
	// ("v8.heapsnapshot", "Node.js (V8)").
	Format   string `json:"format"`
	Producer string `json:"producer"`
	// Metadata is every key/value the reader recorded, in order; keys may
	// repeat, so it is a list and not an object.
	Metadata  []MetaInfo `json:"metadata"`
	NodeCount int        `json:"node_count"`
	// EdgeCount counts the edges also when Options.NodesOnly left them
	// out of the graph, as heapx info does.
	EdgeCount   int `json:"edge_count"`
	StringCount int `json:"string_count"`
	// TotalSelfSize, NodeTypes and Categories are the census of the
	// self sizes the dump records (analysis.Census): the analysis's
	// shallow sizes differ where the runtime's policy moves a size to
	// another node (a V8 WeakMap's table), which a session's categories
	// show instead.
	TotalSelfSize uint64         `json:"total_self_size"`
	NodeTypes     []TypeInfo     `json:"node_types"`
	Categories    []CategoryInfo `json:"categories"`

	// The optional sections: script positions, the allocation trace,
	// DevTools' detachedness (DetachedNodeCount: the nodes it marks
	// detached).
	HasLocations       bool `json:"has_locations"`
	LocationCount      int  `json:"location_count"`
	HasAllocationTrace bool `json:"has_allocation_trace"`
	HasDetachedness    bool `json:"has_detachedness"`
	DetachedNodeCount  int  `json:"detached_node_count"`
	// ReadSeconds is how long reading took (Dump.ReadTime).
	ReadSeconds float64 `json:"read_seconds"`
	// ThreadCount is how many thread stacks the dump records (a Java
	// heap dump's, a core's): heapx stack and heapx threads show them.
	ThreadCount int `json:"thread_count"`
}

// MetaInfo is one key/value of a dump's metadata.
type MetaInfo struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// TypeInfo is the census of one node type: its nodes and their self
// sizes as the dump records them.
type TypeInfo struct {
	Namespace string `json:"namespace"`
	Type      string `json:"type"`
	Category  string `json:"category"`
	Count     uint64 `json:"count"`
	SelfSize  uint64 `json:"self_size"`
}

// CategoryInfo is the census of one neutral category (model.Category).
type CategoryInfo struct {
	Category string `json:"category"`
	Count    uint64 `json:"count"`
	SelfSize uint64 `json:"self_size"`
}

// Info describes the dump: the facts heapx info prints. It needs the
// nodes only (a dump opened with Options.NodesOnly will do) and computes
// no analysis; each call counts them again.
func (d *Dump) Info() *Info {
	g := d.graph
	info := &Info{
		SchemaVersion: InfoSchemaVersion,
		File:          d.path,
		FileSize:      d.size,
		Compression:   "none",
		Metadata:      []MetaInfo{},
		NodeCount:     g.NumNodes(),
		EdgeCount:     d.edges,
		StringCount:   g.Strings.Len(),
		HasLocations:  len(g.Locations) > 0,
		LocationCount: len(g.Locations),
		// An empty trace tree means tracking was off even if the
		// (empty) sections were written, as Node does by default.
		HasAllocationTrace: g.Trace != nil && (len(g.Trace.Tree) > 0 || len(g.Trace.Samples) > 0),
		HasDetachedness:    g.Detachedness != nil,
		ReadSeconds:        d.readTime.Seconds(),
		ThreadCount:        len(g.Stacks),
	}
	if d.gzip {
		info.Compression = "gzip"
	}
	info.Format, _ = g.MetaValue("format")
	info.Producer, _ = g.MetaValue("producer")
	for _, kv := range g.Meta {
		info.Metadata = append(info.Metadata, MetaInfo{kv.Key, kv.Value})
	}
	for _, s := range g.Detachedness {
		if s == 2 {
			info.DetachedNodeCount++
		}
	}
	c := analysis.Census(g)
	info.TotalSelfSize = c.TotalSize
	info.NodeTypes = make([]TypeInfo, 0, len(c.ByType))
	for _, r := range c.ByType {
		info.NodeTypes = append(info.NodeTypes, TypeInfo{r.Type.Namespace, r.Type.Name, r.Type.Category.String(), uint64(r.Count), r.Size})
	}
	info.Categories = make([]CategoryInfo, 0, len(c.ByCategory))
	for _, r := range c.ByCategory {
		info.Categories = append(info.Categories, CategoryInfo{r.Category.String(), uint64(r.Count), r.Size})
	}
	return info
}

// WriteText writes info as heapx info prints it: a key/value block (the
// file, its format, counts and optional sections), then the census by
// node type and by category.
func (info *Info) WriteText(w io.Writer) error {
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
