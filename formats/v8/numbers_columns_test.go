package v8

import (
	"bytes"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestParseColumns runs the fast path on V8's own layout (a newline before
// each record's comma) and checks it stores what it read, and that it
// leaves to the general parser what it does not handle.
func TestParseColumns(t *testing.T) {
	edges := func() *columns {
		return &columns{code: []uint8{colEdgeType, colEdgeName, colEdgeTo}, fields: 3, types: 7,
			edgeType: make([]uint8, 4), edgeName: make([]uint32, 4), edgeTo: make([]int32, 4), nodeF: 7, nodes: 4}
	}
	body := "1,1,7\n,5,2,14\n,2,4294967295,21\n,6,5,14"
	c := edges()
	if !parseColumns(job{blk: []byte(body), count: 12, last: true}, c) {
		t.Fatal("the fast path refused V8's layout")
	}
	if !slices.Equal(c.edgeType, []uint8{1, 5, 2, 6}) || !slices.Equal(c.edgeName, []uint32{1, 2, 1<<32 - 1, 5}) || !slices.Equal(c.edgeTo, []int32{1, 2, 3, 2}) {
		t.Errorf("stored types %v names %v targets %v", c.edgeType, c.edgeName, c.edgeTo)
	}
	// A block that starts inside a record: field 2 of edge 1.
	c = edges()
	if !parseColumns(job{blk: []byte("14\n,2,4,21\n,"), k0: 5, count: 4}, c) || c.edgeTo[1] != 2 || c.edgeType[2] != 2 || c.edgeTo[2] != 3 {
		t.Errorf("mid-record block: types %v targets %v", c.edgeType, c.edgeTo)
	}
	for _, bad := range []struct{ name, body string }{
		{"space", "1, 1,7"},
		{"sign", "1,-1,7"},
		{"float", "1,1.5,7"},
		{"to_node misaligned", "1,1,8"},
		{"to_node past the nodes", "1,1,28"},
		{"type out of range", "7,1,7"},
		{"name out of range", "1,4294967296,7"},
		{"19 digits", "1,1234567890123456789,7"},
		{"empty value", "1,,7"},
		{"no comma at a block's end", "1,1,7"},
	} {
		last := bad.name != "no comma at a block's end"
		if parseColumns(job{blk: []byte(bad.body), count: 3, last: last}, edges()) {
			t.Errorf("%s: the fast path accepted %q", bad.name, bad.body)
		}
	}
	if parseColumns(job{blk: []byte("1,1,7"), count: 4, last: true}, edges()) {
		t.Error("the fast path accepted a block whose count is off")
	}
}

// TestColumnsMatchGeneralParser reads every fixture with and without the
// fast path: the graphs are the same.
func TestColumnsMatchGeneralParser(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			fast, err := ReadFile(fixture(name), ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			fastColumns = false
			defer func() { fastColumns = true }()
			general, err := ReadFile(fixture(name), ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			sameGraph(t, fast, general)
			if !slices.Equal(fast.Detachedness, general.Detachedness) || !slices.Equal(fast.TraceNodeID, general.TraceNodeID) {
				t.Error("detachedness or trace node ids differ")
			}
		})
	}
}

// TestWideValues reads a snapshot whose ids and self sizes pass 32 bits
// here and there (other tools' and future V8's): the nodes are parsed in
// parallel blocks, the fast path leaves those blocks to the general parser,
// and every value must come out whole.
func TestWideValues(t *testing.T) {
	var sb strings.Builder
	n := 200000
	fmt.Fprintf(&sb, `{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count"],"node_types":[["hidden","object"],"string","number","number","number"],"edge_fields":["type","name_or_index","to_node"],"edge_types":[["element"],"number","node"]},"node_count":%d,"edge_count":0},"nodes":[`, n)
	id := func(i int) uint64 {
		if i%50000 == 49999 {
			return 1<<40 + uint64(i)
		}
		return uint64(2*i + 1)
	}
	size := func(i int) uint64 {
		if i%70001 == 7 {
			return 1<<33 + 5
		}
		return uint64(i % 1000)
	}
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteString("\n,")
		}
		fmt.Fprintf(&sb, "1,0,%d,%d,0", id(i), size(i))
	}
	sb.WriteString(`],"edges":[],"strings":[""]}`)
	for _, fast := range []bool{true, false} {
		fastColumns = fast
		g, err := Read(strings.NewReader(sb.String()), "wide", ReadOptions{})
		fastColumns = true
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if g.Nodes.ID.At(i) != id(i) || g.Nodes.Size.At(i) != size(i) {
				t.Fatalf("fast path %v: node %d id %d size %d, want %d %d", fast, i, g.Nodes.ID.At(i), g.Nodes.Size.At(i), id(i), size(i))
			}
		}
	}
}

// TestRecordLoops checks the record loops (edgeRecords, nodeRecords)
// against the per-value loop on blocks of V8's layouts holding numbers of
// every length from 1 to 18 digits, values out of range and bytes neither
// loop takes, anywhere in a block and at every offset into a record: both
// must store the same values and agree on whether the block is taken.
func TestRecordLoops(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	number := func(digits int) string {
		s := strconv.Itoa(1 + rng.Intn(9))
		for len(s) < digits {
			s += strconv.Itoa(rng.Intn(10))
		}
		return s
	}
	// Values of 1 to 9 digits fit every 32-bit column.
	value := func() string {
		if rng.Intn(10) < 4 {
			return strconv.Itoa(rng.Intn(10))
		}
		return number(1 + rng.Intn(9))
	}
	layouts := []struct {
		code  []uint8
		types uint64
	}{
		{[]uint8{colEdgeType, colEdgeName, colEdgeTo}, 7},
		{[]uint8{colNodeType, colNodeName, colNodeID, colNodeSize, colNodeEdges, colSkip, colNodeDetach}, 16},
		{[]uint8{colNodeType, colNodeName, colNodeID, colNodeSize, colNodeEdges, colNodeDetach}, 16},
	}
	const records = 200
	newColumns := func(code []uint8, types uint64) *columns {
		return &columns{code: code, fields: uint64(len(code)), types: types, nodeF: 7, nodes: 1 << 40,
			edgeType: make([]uint8, records), edgeName: make([]uint32, records), edgeTo: make([]int32, records),
			nodeType: make([]uint8, records), nodeName: make([]uint32, records), nodeID: make([]uint32, records),
			nodeSize: make([]uint32, records), firstEdge: make([]uint32, records+1), detach: make([]uint8, records)}
	}
	taken := map[bool]int{}
	for trial := range 300 {
		l := layouts[trial%len(layouts)]
		var vals []string
		for range records * len(l.code) {
			v := value()
			switch l.code[len(vals)%len(l.code)] {
			case colEdgeTo:
				v = strconv.Itoa(7 * rng.Intn(1e6)) // a node's start
			case colEdgeType, colNodeType, colNodeDetach:
				v = strconv.Itoa(rng.Intn(int(l.types)))
			}
			vals = append(vals, v)
		}
		var sb strings.Builder
		for i, v := range vals {
			if i > 0 {
				if i%len(l.code) == 0 {
					sb.WriteByte('\n')
				}
				sb.WriteByte(',')
			}
			sb.WriteString(v)
		}
		body := []byte(sb.String())
		switch trial % 4 {
		case 1:
			// A byte neither loop takes, somewhere.
			body[rng.Intn(len(body))] = " x,\n"[rng.Intn(4)]
		case 2:
			// A value out of its column's range, or too long for the
			// record loops (16 to 18 digits) or for both (19).
			k := rng.Intn(len(vals))
			vals[k] = [...]string{"300", "8", number(10 + rng.Intn(10))}[rng.Intn(3)]
			body = []byte(strings.Join(vals, ","))
		}
		// Start at some value: the block's first number is that value.
		skip := rng.Intn(2 * len(l.code))
		start := 0
		for range skip {
			start = bytes.IndexByte(body[start:], ',') + start + 1
		}
		blk := body[start:]
		j := job{blk: blk, k0: uint64(skip), count: uint64(len(vals) - skip), last: true}
		fast, slow := newColumns(l.code, l.types), newColumns(l.code, l.types)
		okFast := parseColumns(j, fast)
		_, _, _, count, okSlow := slow.values(blk, 0, j.k0%slow.fields, j.k0/slow.fields, 0, true, false)
		okSlow = okSlow && count == j.count
		taken[okFast]++
		if okFast != okSlow {
			t.Fatalf("trial %d: record loops say %v, the value loop %v, on %q", trial, okFast, okSlow, blk)
		}
		if okFast && !reflect.DeepEqual(fast, slow) {
			t.Fatalf("trial %d: the loops stored different values from %q", trial, blk)
		}
	}
	if taken[true] < 50 || taken[false] < 50 {
		t.Errorf("blocks taken %d, refused %d: the trials should do both often", taken[true], taken[false])
	}
}
