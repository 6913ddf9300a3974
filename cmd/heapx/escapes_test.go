package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// These tests feed heapx dumps crafted to drive a terminal: clear the
// screen, set the window title, flood it with an error message.

// hostileSnapshot is a V8 snapshot whose names try to drive a terminal:
// clear the screen, set the window title, CSI as the C1 control U+009B,
// a right-to-left override; one node type's name is an escape too.
const hostileSnapshot = `{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count"],` +
	`"node_types":[["synthetic","object","string","\u001b[2Jtype"],"string","number","number","number"],` +
	`"edge_fields":["type","name_or_index","to_node"],"edge_types":[["property"],"string_or_number","node"]},` +
	`"node_count":4,"edge_count":3},` +
	`"nodes":[0,0,1,0,3, 1,1,3,100,0, 2,2,5,200,0, 3,3,7,50,0],` +
	`"edges":[0,4,5,0,5,10,0,6,15],` +
	`"strings":["","\u001b[2J\u001b]0;pwned\u0007Evil","a\u009b31mb","c\u202ed","\u001b[31mkey","k\u009b2","\u0007bell"]}`

// terminalBytes are what must never reach a terminal from a dump: ESC,
// BEL, the C1 CSI as UTF-8 and as a raw byte, and the RTL override.
var terminalBytes = []string{"\x1b", "\x07", "\u009b", "\x9b", "\u202e"}

func checkNoTerminalBytes(t *testing.T, what, out string) {
	t.Helper()
	for _, b := range terminalBytes {
		if strings.Contains(out, b) {
			t.Errorf("%s prints %q:\n%q", what, b, out)
		}
	}
}

// TestTerminalEscapesInTables: every table heapx prints shows a dump's
// escape sequences as text (\x1b, \u009b), in object and class names,
// node type names, headings and sql's column headers and cells.
func TestTerminalEscapesInTables(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	snap := filepath.Join(dir, "hostile.heapsnapshot")
	if err := os.WriteFile(snap, []byte(hostileSnapshot), 0o644); err != nil {
		t.Fatal(err)
	}
	wants := map[string][]string{
		"top":     {`\x1b[2J\x1b]0;pwned\x07Evil`},
		"summary": {`\x1b[2J\x1b]0;pwned\x07Evil`},
		"info":    {`\x1b[2Jtype`},
	}
	// sql says on stderr that it builds its cache: stderr is checked too.
	run := func(args ...string) string {
		t.Helper()
		r := heapx(t, args...)
		if r.code != 0 {
			t.Fatalf("heapx %v: exit %d, stderr:\n%s", args, r.code, r.stderr)
		}
		checkNoTerminalBytes(t, "heapx "+args[0]+" (stderr)", r.stderr)
		return r.stdout
	}
	for _, args := range [][]string{{"top", snap}, {"summary", snap}, {"info", snap}, {"report", snap},
		{"paths", "--id", "5", snap}, {"sql", snap, "SELECT data FROM strings"}} {
		out := run(args...)
		checkNoTerminalBytes(t, "heapx "+args[0], out)
		for _, w := range wants[args[0]] {
			if !strings.Contains(out, w) {
				t.Errorf("heapx %s does not show %s:\n%s", args[0], w, out)
			}
		}
	}
	// sql: a column name and cells with escapes, C1 controls and bytes
	// that are not UTF-8.
	q := "SELECT 'x' AS \"\x1b]0;title\x07\", 'a' || char(155) || '2J' AS c1, CAST(x'9b3f' AS TEXT) AS raw, char(8238) AS rlo"
	out := run("sql", snap, q)
	checkNoTerminalBytes(t, "heapx sql", out)
	for _, w := range []string{`\x1b]0;title\x07`, `a\u009b2J`, `\x9b?`, `\u202e`} {
		if !strings.Contains(out, w) {
			t.Errorf("heapx sql does not show %s:\n%s", w, out)
		}
	}
	// --csv and --json give the exact values to a pipe (JSON escapes ESC
	// itself; CSV is data).
	if out := ok(t, "sql", "--csv", snap, q); !strings.Contains(out, "\x1b]0;title\x07") || !strings.Contains(out, "\u009b") {
		t.Errorf("sql --csv to a pipe changed the values:\n%q", out)
	}
}

// TestTerminalEscapesInErrors: an error quoting a dump's text shows its
// escapes as text and stays short however much text the dump holds.
func TestTerminalEscapesInErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	many := make([]string, 1_000_000)
	for i := range many {
		many[i] = fmt.Sprintf(`"f%d"`, i)
	}
	cases := []struct {
		path string
		want string
	}{
		// A meta field name with escapes, and a required field missing.
		{write("field.heapsnapshot", []byte(`{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","\u001b]0;pwned\u0007"],`+
			`"node_types":[["object"]],"edge_fields":["type","name_or_index","to_node"],"edge_types":[["property"]]},"node_count":0,"edge_count":0}}`)),
			`missing field "edge_count" in 5 fields "type,name,id,self_size,\x1b]0;pwned\x07"`},
		// A million field names: the message quotes a few.
		{write("many.heapsnapshot", []byte(`{"snapshot":{"meta":{"node_fields":[`+strings.Join(many, ",")+`],`+
			`"node_types":[],"edge_fields":[],"edge_types":[]},"node_count":0,"edge_count":0}}`)),
			`missing field "type" in 1000000 fields "f0,f1,f2,`},
		// An unknown section whose name is an escape.
		{write("section.heapsnapshot", []byte(`{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count"],`+
			`"node_types":[["object"]],"edge_fields":["type","name_or_index","to_node"],"edge_types":[["property"]]},"node_count":0,"edge_count":0},`+
			`"\u001b[2J\u009b": {"a": [}`)), `\x1b[2J\u009b`},
		// An HPROF class whose name is an escape, named in an error.
		{write("class.hprof", hostileHPROF()), `class \x1b]0;pwned\x07Evil's fields take 0`},
	}
	for _, c := range cases {
		r := heapx(t, "info", c.path)
		if r.code != 1 {
			t.Errorf("%s: exit %d, want 1", c.path, r.code)
		}
		checkNoTerminalBytes(t, filepath.Base(c.path)+"'s error", r.stderr)
		if !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: the error does not say %s:\n%.1000s", filepath.Base(c.path), c.want, r.stderr)
		}
		if len(r.stderr) > 1000 || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%s: the error is %d bytes, %d lines", filepath.Base(c.path), len(r.stderr), strings.Count(r.stderr, "\n"))
		}
	}
}

// hostileHPROF is an HPROF dump whose one class is named with escape
// sequences and whose instance has field data the class does not declare,
// so the reader's error names the class.
func hostileHPROF() []byte {
	var b []byte
	u1 := func(v byte) { b = append(b, v) }
	u4 := func(v uint32) { b = binary.BigEndian.AppendUint32(b, v) }
	record := func(tag byte, body []byte) {
		u1(tag)
		u4(0)
		u4(uint32(len(body)))
		b = append(b, body...)
	}
	b = append(b, "JAVA PROFILE 1.0.2\x00"...)
	u4(4) // identifier size
	u4(0)
	u4(0)
	name := "\x1b]0;pwned\x07Evil"
	record(0x01, append([]byte{0, 0, 0, 1}, name...))                    // UTF8: id 1
	record(0x02, []byte{0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1}) // LOAD CLASS 0x100 named 1
	var seg []byte
	seg = append(seg, 0x20)                         // CLASS DUMP
	seg = binary.BigEndian.AppendUint32(seg, 0x100) // class
	seg = append(seg, make([]byte, 4+6*4)...)       // stack serial, super, loader, signers, domain, 2 reserved
	seg = append(seg, 0, 0, 0, 0)                   // instance size
	seg = append(seg, 0, 0, 0, 0, 0, 0)             // no constants, statics, fields
	seg = append(seg, 0x21)                         // INSTANCE DUMP
	seg = binary.BigEndian.AppendUint32(seg, 0x200)
	seg = append(seg, 0, 0, 0, 0)
	seg = binary.BigEndian.AppendUint32(seg, 0x100)
	seg = binary.BigEndian.AppendUint32(seg, 4) // 4 bytes of fields the class lacks
	seg = append(seg, 1, 2, 3, 4)
	record(0x1c, seg)
	record(0x2c, nil)
	return b
}
