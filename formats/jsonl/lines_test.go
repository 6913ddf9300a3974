package jsonl

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapx/heapx/formats/hprof"
	"github.com/heapx/heapx/formats/spidermonkey"
	"github.com/heapx/heapx/model"
)

// TestLineErrors pins the reader's error for each way a line can be
// wrong, whole: which problem is reported when a line has two, with its
// line number, for a line the parallel parser meets (compact) and for one
// only the line parser reads (spaced).
func TestLineErrors(t *testing.T) {
	head := lines(`["metadata","version_major","1"]`, decls,
		`["record","node",["id","type","name","self_size"]]`,
		`["node_type",0,"v8:object","object",[]]`,
		`["edge_type",0,"v8:property","object property","strong","string"]`,
		`["edge_type",1,"v8:element","element","strong","index"]`,
		`["string",0,""]`)
	plain := `["record","edge",["from","type","name","to"]]` + "\n"
	smi := `["record","edge",["from","type","name","to","smi"]]` + "\n"
	for _, c := range []struct{ name, in, err string }{
		{"escape", `["string",1,"\q"]`, `line 10: string text: invalid escape \q`},
		{"hex", `["string",1,"\u12G4"]`, `line 10: string text: bad \u escape`},
		{"hex short", `["string",1,"\u12"]`, `line 10: string text: bad \u escape`},
		{"pair hex", `["string",1,"\ud800\uZ000"]`, `line 10: string text: bad \u escape`},
		{"unterminated", `["string",1,"abc`, `line 10: string text: string not terminated before the end of the line`},
		{"cut escape", `["string",1,"abc\`, `line 10: string text: escape cut at the end of the line`},
		{"control", "[\"string\",1,\"a\tb\"]", `line 10: string text: unescaped control character 0x09 in a string`},
		{"control after escape", "[\"string\",1,\"\\n\x01\"]", `line 10: string text: unescaped control character 0x01 in a string`},
		{"not utf-8", "[\"string\",1,\"\xff\"]", `line 10: string text: string holds bytes that are not UTF-8`},
		{"escaped not utf-8", "[\"string\",1,\"\\n\xff\"]", `line 10: string text: string holds bytes that are not UTF-8`},
		{"tag", `["no\de",1,0,0,5]`, `line 10: record type: invalid escape \d`},
		// The node type is checked as soon as it is read.
		{"node type first", `["node",1,7,"x",5]`, `line 10: node type 7 is not declared by a node_type record before this line`},
		{"node field first", `["node","x",7,0,5]`, `line 10: expected node id (an unsigned integer), found '"'`},
		{"node end", `["node",1,0,0,5] x`, `line 10: unexpected 'x' after the record`},
		// In heapx's own edge layout, after all four fields.
		{"plain edge field first", plain + `["edge",1,7,"x",2]`, `line 11: expected edge name (a string id or an index) (an unsigned integer), found '"'`},
		{"plain edge type", plain + `["edge",1,7,0,2]`, `line 11: edge type 7 is not declared by an edge_type record before this line`},
		{"edge type first", smi + `["edge",1,7,"x",2,null]`, `line 11: edge type 7 is not declared by an edge_type record before this line`},
		{"plain edge type before ends", plain + `["edge",1,7,0,null]`, `line 11: edge type 7 is not declared by an edge_type record before this line`},
		{"edge type before ends", smi + `["edge",1,7,0,null,null]`, `line 11: edge type 7 is not declared by an edge_type record before this line`},
		// A node read twice is found when the id map is complete: at the
		// end, or at the first edges the parallel parser reads (see
		// TestNodeTwice); an error in a line before then is the one
		// reported.
		{"node twice, error after", smi + `["node",1,0,0,5]` + "\n" + `["node",1,0,0,5]` + "\n" + `["edge",1,0,0,1,null]` + "\n" + `["string",1,"\q"]`, `line 14: string text: invalid escape \q`},
		{"edge both", smi + `["node",1,0,0,5]` + "\n" + `["edge",1,0,0,1,5]`, `line 12: edge has both a target node and a small integer (smi)`},
		{"edge index before end", plain + `["node",1,0,0,5]` + "\n" + `["edge",1,1,4294967296,1] x`, `line 12: edge index 4294967296 does not fit in 32 bits`},
		{"field list", `["record","x:y","a"]`, `line 10: expected field list (an array of strings), found '"'`},
		{"field list end", `["record","x:y",["a" "b"]]`, `line 10: expected ',' or ']' in field list, found '"'`},
		{"subtype pair", `["node_type",1,"x:a","object",[["f"]]]`, `line 10: expected ',', found ']'`},
		{"subtype fields end", `["node_type",1,"x:a","object",[["f","n"] x]]`, `line 10: expected ',' or ']' in the subtype fields, found 'x'`},
		{"section values", `["record","v8:section",["name","values"]]` + "\n" + `["v8:section","s",[1,x]]`, `line 11: expected section value (an unsigned integer), found 'x'`},
		{"section values open", `["record","v8:section",["name","values"]]` + "\n" + `["v8:section","s",null]`, `line 11: expected '[' starting the section's values, found 'n'`},
		{"skipped field", `["record","v8:sample",["timestamp_us","x:a"]]` + "\n" + `["v8:sample",1,[1,x]]`, `line 11: field "x:a": expected a value, found "x"`},
		{"skipped string", `["record","v8:sample",["timestamp_us","last_assigned_id","x:z"]]` + "\n" + `["v8:sample",1,2,"\q"]`, `line 11: field "x:z": value: invalid escape \q`},
	} {
		for _, spaced := range []bool{false, true} {
			in := head + c.in + "\n"
			if spaced {
				in = strings.ReplaceAll(in, ",", ", ")
			}
			_, err := Read(strings.NewReader(in), "f.jsonl", ReadOptions{})
			if want := "f.jsonl: " + c.err; err == nil || err.Error() != want {
				t.Errorf("%s (spaced %v): %v, want %s", c.name, spaced, err, want)
			}
		}
	}
}

// TestNodeTwice pins which error a file with a node read twice and a bad
// line after it gets: the parallel parser freezes the id map, finding the
// node read twice, at the first edges it reads itself, which are those in
// heapx's own layout, compact, each ending its line (as heapx writes
// them); other edges go to the line parser, and the bad line is found
// first.
func TestNodeTwice(t *testing.T) {
	in := lines(`["metadata","version_major","1"]`, decls,
		`["record","node",["id","type","name","self_size"]]`,
		`["record","edge",["from","type","name","to"]]`,
		`["node_type",0,"v8:object","object",[]]`,
		`["edge_type",0,"v8:property","object property","strong","string"]`,
		`["string",0,""]`,
		`["node",1,0,0,5]`, `["node",1,0,0,5]`, `["edge",1,0,0,1]`, `["string",1,"\q"]`)
	for name, c := range map[string]struct{ in, err string }{
		"compact": {in, "line 11: node id 1 appears twice"},
		"spaced":  {strings.ReplaceAll(in, `["edge",1,`, `["edge", 1,`), `line 13: string text: invalid escape \q`},
		"crlf":    {strings.ReplaceAll(in, `["edge",1,0,0,1]`+"\n", `["edge",1,0,0,1]`+"\r\n"), `line 13: string text: invalid escape \q`},
		"null to": {strings.ReplaceAll(in, `["edge",1,0,0,1]`, `["edge",1,0,0,null]`), `line 12: edge has neither a target node (to is null) nor a small integer (smi)`},
	} {
		_, err := Read(strings.NewReader(c.in), "f.jsonl", ReadOptions{})
		if want := "f.jsonl: " + c.err; err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", name, err, want)
		}
	}
}

// TestStrings reads strings with every escape: a surrogate pair joined, a
// lone surrogate kept as WTF-8, a string field the reader skips after the
// text (it decodes into a buffer of its own).
func TestStrings(t *testing.T) {
	in := lines(`["metadata","version_major","1"]`,
		`["record","string",["id","text","x:note"]]`,
		`["string",0,"a\"b\\c\/d\b\f\n\r\t\u00e9\u20AC",null]`,
		`["string",1,"\ud83d\ude00\ud800\u0041\udc00","\u0041\n"]`,
		`["string",2,"é\n","skipped\n"]`)
	g, err := Read(strings.NewReader(in), "s.jsonl", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"a\"b\\c/d\b\f\n\r\té€", "😀\xed\xa0\x80A\xed\xb0\x80", "é\n"} {
		if got := g.Strings.At(uint32(i)); got != want {
			t.Errorf("string %d: %q, want %q", i, got, want)
		}
	}
	if v, _ := g.MetaValue("heapx:skipped_fields"); v != "string.x:note=3" {
		t.Errorf("skipped %q", v)
	}
}

// TestRoundTripOtherRuntimes writes a Java and a Firefox dump as JSON Lines
// and reads them back the same: their gc_root records, which no V8 dump
// has, and their own node and edge types.
func TestRoundTripOtherRuntimes(t *testing.T) {
	hp, err := hprof.ReadFile(filepath.Join("..", "..", "testdata", "hprof", "java-leakdemo-small.hprof.gz"), hprof.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fx, err := spidermonkey.ReadFile(filepath.Join("..", "..", "testdata", "spidermonkey", "ff-small-page.fxsnapshot"), spidermonkey.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for name, g := range map[string]*model.Graph{"hprof": hp, "fxsnapshot": fx} {
		var buf bytes.Buffer
		if err := Write(&buf, g, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		h, err := Read(bytes.NewReader(buf.Bytes()), name+".jsonl", ReadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := model.Compare(g, h, ignoreMeta); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if len(hp.GCRoots) == 0 || len(hp.RootKinds) < 2 {
		t.Errorf("the Java dump has %d gc roots of %d kinds: not a test of them", len(hp.GCRoots), len(hp.RootKinds))
	}
}
