package hostile

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/gzip"
)

// v8Meta is the snapshot.meta of Node 20's snapshots, with node fields
// fields.
func v8Meta(fields []string) string {
	f, _ := json.Marshal(fields)
	return `{"node_fields":` + string(f) + `,` +
		`"node_types":[["hidden","array","string","object","code","closure","regexp","number","native","synthetic","concatenated string","sliced string","symbol","bigint","object shape"],"string","number","number","number","number","number"],` +
		`"edge_fields":["type","name_or_index","to_node"],` +
		`"edge_types":[["context","element","property","internal","hidden","shortcut","weak"],"string_or_number","node"]}`
}

var v8Fields = []string{"type", "name", "id", "self_size", "edge_count", "trace_node_id", "detachedness"}

// v8Snapshot writes a snapshot of three nodes to w: the root (synthetic),
// which holds an object named class by a property "holder", which holds a
// string node by a property "text"; the string's text is written by text.
func v8Snapshot(w io.Writer, class string, text func(io.Writer) error) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `{"snapshot":{"meta":%s,"node_count":3,"edge_count":2,"trace_function_count":0},`, v8Meta(v8Fields))
	// type, name, id, self_size, edge_count, trace_node_id, detachedness
	bw.WriteString(`"nodes":[9,0,1,0,1,0,0,3,1,3,64,1,0,0,2,2,5,32,0,0,0],`)
	// type, name_or_index, to_node (an index into nodes)
	bw.WriteString(`"edges":[2,3,7,2,4,14],`)
	c, _ := json.Marshal(class)
	fmt.Fprintf(bw, `"strings":["",%s,"`, c)
	if err := text(bw); err != nil {
		return err
	}
	bw.WriteString(`","holder","text"]}`)
	return bw.Flush()
}

// V8LongString writes the gzip-compressed snapshot of issue 12.6 to w:
// one string of n bytes ('x'), which at 500 MB compresses to 510 KB and
// took 2.3-3.9 GB to print in a table.
func V8LongString(w io.Writer, n int64) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	err = v8Snapshot(zw, "Holder", func(w io.Writer) error {
		block := []byte(strings.Repeat("x", 1<<20))
		for left := n; left > 0; {
			k := min(left, int64(len(block)))
			if _, err := w.Write(block[:k]); err != nil {
				return err
			}
			left -= k
		}
		return nil
	})
	if err != nil {
		return err
	}
	return zw.Close()
}

// V8Escapes is a snapshot whose object class and string carry Escapes,
// which summary, top and the other tables print (issue 12.7).
func V8Escapes() []byte {
	var b strings.Builder
	_ = v8Snapshot(&b, Escapes, func(w io.Writer) error {
		s, _ := json.Marshal(Escapes)
		_, err := w.Write(s[1 : len(s)-1])
		return err
	})
	return []byte(b.String())
}

// V8MetaFields is a snapshot whose meta lists n node fields, f0, f1, ...,
// one of them carrying Escapes, and not the required "type": the error
// quoted them all (7.9 MB for a million) and let the escapes through
// (issue 12.7).
func V8MetaFields(n int) []byte {
	fields := make([]string, n)
	for i := range fields {
		fields[i] = fmt.Sprintf("f%d", i)
	}
	fields[n/2] = Escapes
	return []byte(fmt.Sprintf(`{"snapshot":{"meta":%s,"node_count":0,"edge_count":0},"nodes":[],"edges":[],"strings":[]}`, v8Meta(fields)))
}
