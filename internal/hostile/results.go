package hostile

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/klauspost/compress/zstd"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// The lies of issue 12.10 told in analysed exchange files (heapx convert
// --analyze): results the readers took as they were, so that top printed
// a retained size of 2^64-1 as 18446744073709551616.0%, or a root that
// silently became another node.

// jsonlNodes is an analysed .jsonl split into lines, with the columns of
// its node records.
type jsonlNodes struct {
	lines                [][]byte
	id, retained, domCol int            // positions in a node record
	byID                 map[string]int // node id -> line
	first                int            // the first node line
}

func parseJSONL(src []byte) (*jsonlNodes, error) {
	j := &jsonlNodes{lines: bytes.Split(src, []byte("\n")), id: -1, retained: -1, domCol: -1, byID: map[string]int{}, first: -1}
	for i, l := range j.lines {
		switch {
		case bytes.HasPrefix(l, []byte(`["record","node",`)):
			var decl []json.RawMessage
			var fields []string
			if err := json.Unmarshal(l, &decl); err != nil || len(decl) < 3 {
				return nil, fmt.Errorf("line %d: %v", i+1, err)
			}
			if err := json.Unmarshal(decl[2], &fields); err != nil {
				return nil, err
			}
			for k, f := range fields {
				switch f {
				case "id":
					j.id = k + 1
				case "heapx:retained_size":
					j.retained = k + 1
				case "heapx:dominator":
					j.domCol = k + 1
				}
			}
		case bytes.HasPrefix(l, []byte(`["node",`)):
			rec, err := j.record(i)
			if err != nil {
				return nil, err
			}
			if j.first < 0 {
				j.first = i
			}
			j.byID[string(rec[j.id])] = i
		}
	}
	if j.first < 0 || j.retained < 0 || j.domCol < 0 {
		return nil, errors.New("not an analysed .jsonl: no node records with heapx:retained_size and heapx:dominator")
	}
	return j, nil
}

func (j *jsonlNodes) record(i int) ([]json.RawMessage, error) {
	var rec []json.RawMessage
	if err := json.Unmarshal(j.lines[i], &rec); err != nil {
		return nil, fmt.Errorf("line %d: %v", i+1, err)
	}
	return rec, nil
}

func (j *jsonlNodes) set(i, col int, v string) error {
	rec, err := j.record(i)
	if err != nil {
		return err
	}
	rec[col] = json.RawMessage(v)
	j.lines[i], err = json.Marshal(rec)
	return err
}

func (j *jsonlNodes) bytes() []byte { return bytes.Join(j.lines, []byte("\n")) }

// JSONLRetainedMax returns src, an analysed .jsonl, with its second node
// retaining 2^64-1 bytes (top printed 18446744073709551616.0%).
func JSONLRetainedMax(src []byte) ([]byte, error) {
	j, err := parseJSONL(src)
	if err != nil {
		return nil, err
	}
	if err := j.set(j.first+1, j.retained, "18446744073709551615"); err != nil {
		return nil, err
	}
	return j.bytes(), nil
}

// JSONLDominatorCycle returns src, an analysed .jsonl, where a node and
// its dominator (not the root) dominate each other.
func JSONLDominatorCycle(src []byte) ([]byte, error) {
	j, err := parseJSONL(src)
	if err != nil {
		return nil, err
	}
	for i := j.first; i < len(j.lines); i++ {
		if !bytes.HasPrefix(j.lines[i], []byte(`["node",`)) {
			continue
		}
		rec, err := j.record(i)
		if err != nil {
			return nil, err
		}
		dom := string(rec[j.domCol])
		d, ok := j.byID[dom]
		if dom == "null" || !ok {
			continue
		}
		drec, err := j.record(d)
		if err != nil {
			return nil, err
		}
		if string(drec[j.domCol]) == "null" {
			continue // dominated by the root
		}
		if err := j.set(d, j.domCol, string(rec[j.id])); err != nil {
			return nil, err
		}
		return j.bytes(), nil
	}
	return nil, errors.New("no node below the root's children")
}

// JSONLDuplicateNode returns src, a .jsonl, with its first node record
// again at the end of the file; the reader said "(truncated file?)".
func JSONLDuplicateNode(src []byte) ([]byte, error) {
	j, err := parseJSONL(src)
	if err != nil {
		return nil, err
	}
	out := bytes.TrimRight(src, "\n")
	out = append(append(out, '\n'), j.lines[j.first]...)
	return append(out, '\n'), nil
}

// DBRetainedMax makes a node of the analysed .db at path, the first with
// a dominator, retain 2^64-1 bytes (-1 in SQLite's signed integers). The
// change to heapx_result empties heapx_packed, so the rows are what is
// read.
func DBRetainedMax(path string) error {
	return execDB(path, `UPDATE heapx_result SET retained_size = -1 WHERE node_identifier = (
		SELECT node_identifier FROM heapx_result WHERE dominator IS NOT NULL ORDER BY node_identifier LIMIT 1)`)
}

// DBDominatorCycle makes a node of the analysed .db at path and its
// dominator (not the root) dominate each other, in the rows.
func DBDominatorCycle(path string) error {
	return execDB(path, `UPDATE heapx_result SET dominator = (
		SELECT c.node_identifier FROM heapx_result c JOIN heapx_result d ON d.node_identifier = c.dominator
		WHERE d.dominator IS NOT NULL ORDER BY c.node_identifier LIMIT 1)
	WHERE node_identifier = (
		SELECT c.dominator FROM heapx_result c JOIN heapx_result d ON d.node_identifier = c.dominator
		WHERE d.dominator IS NOT NULL ORDER BY c.node_identifier LIMIT 1)`)
}

// DBPackedRoot sets the root index in the heapx_packed header of the
// analysed .db at path to 2^32+2, which became node 2.
func DBPackedRoot(path string) error {
	return editBlob(path, "header", func(b []byte) error {
		const hRoot = 5 // the header's sixth word (formats/sqlite/packed.go)
		if len(b) < 8*(hRoot+1) {
			return errors.New("short heapx_packed header")
		}
		binary.LittleEndian.PutUint64(b[8*hRoot:], 1<<32+2)
		return nil
	})
}

// DBPackedRetainedMax makes the second node retain 2^64-1 bytes in the
// heapx_packed copy of the results of the analysed .db at path (the rows
// stay right; heapx_packed is what a reader takes).
func DBPackedRetainedMax(path string) error {
	return editBlob(path, "result.retained_size", func(b []byte) error {
		if len(b) < 16 {
			return errors.New("short result.retained_size")
		}
		binary.LittleEndian.PutUint64(b[8:], 1<<64-1)
		return nil
	})
}

func execDB(path, query string) error {
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadWrite)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := sqlitex.ExecuteTransient(conn, query, nil); err != nil {
		return err
	}
	if conn.Changes() != 1 {
		return fmt.Errorf("%s: %d rows changed, want 1", path, conn.Changes())
	}
	return nil
}

// editBlob rewrites part 0 of the named heapx_packed column: inflated
// and compressed again for a column (layout 3 compresses every part but
// the header's; formats/sqlite/packed.go).
func editBlob(path, name string, edit func([]byte) error) error {
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadWrite)
	if err != nil {
		return err
	}
	defer conn.Close()
	var b []byte
	err = sqlitex.ExecuteTransient(conn, "SELECT data FROM heapx_packed WHERE name = ? AND part = 0", &sqlitex.ExecOptions{
		Args: []any{name},
		ResultFunc: func(st *sqlite.Stmt) error {
			b = make([]byte, st.ColumnLen(0))
			st.ColumnBytes(0, b)
			return nil
		},
	})
	if err != nil {
		return err
	}
	if b == nil {
		return fmt.Errorf("%s: no heapx_packed %s", path, strconv.Quote(name))
	}
	if name != "header" {
		if b, err = zstdDecode(b); err != nil {
			return err
		}
	}
	if err := edit(b); err != nil {
		return err
	}
	if name != "header" {
		enc, err := zstd.NewWriter(nil)
		if err != nil {
			return err
		}
		b = enc.EncodeAll(b, nil)
		enc.Close()
	}
	return sqlitex.ExecuteTransient(conn, "UPDATE heapx_packed SET data = ? WHERE name = ? AND part = 0", &sqlitex.ExecOptions{Args: []any{b, name}})
}

// zstdDecode inflates one zstd frame.
func zstdDecode(b []byte) ([]byte, error) {
	dec, err := zstd.NewReader(nil)
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	return dec.DecodeAll(b, nil)
}
