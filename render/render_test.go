package render_test

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/render"
)

// sample is a small result with what every form has to get right: a
// warning, a header line, a table with a text column empty in every row
// (Shape), every kind of number, a cell with no value, a dump's name with
// an escape sequence and markup, a chart, a table without rows, a tree,
// and notes.
func sample() *query.Result {
	return &query.Result{
		Query:    "sample",
		Header:   []string{"Heap of app.heapsnapshot"},
		Warnings: []query.Warning{{Code: query.WarnOrderReversed, Message: "The snapshots look out of order."}},
		Sections: []*query.Section{
			{Heading: "Classes", Table: &query.Table{
				Columns: []query.Column{{Key: "name", Title: "Name", Kind: query.Text}, {Key: "shape", Title: "Shape", Kind: query.Text},
					{Key: "count", Title: "Count", Kind: query.Count}, {Key: "size", Title: "Size", Kind: query.Bytes},
					{Key: "share", Title: "%", Kind: query.Percent}, {Key: "example", Title: "Example", Kind: query.ID},
					{Key: "growth", Title: "Growth", Kind: query.BytesDelta}, {Key: "distance", Title: "Distance", Kind: query.Distance}},
				Rows: [][]any{
					{"Evil\x1b[2J<b>", "", 1200, uint64(1500000), 62.5, query.Address(0xff10), int64(-2000), int32(3)},
					{"Item", "", 3, uint64(999), 0.04, uint64(42), nil, int32(100000000)},
				}},
				Chart: &query.Chart{Label: "name", Value: "size"},
				Notes: []string{"2 of 9 classes"}},
			{Heading: "Strings", Table: &query.Table{Columns: []query.Column{{Key: "text", Title: "Text", Kind: query.Text}}},
				Notes: []string{"The dump records no string contents."}},
			{Heading: "Paths", Tree: &query.Tree{
				Columns: []query.Column{{Key: "edge", Title: "Edge", Kind: query.Text}, {Key: "objects", Title: "Objects", Kind: query.Count}},
				Roots: []*query.TreeNode{{Values: []any{"(root)", 3}, Children: []*query.TreeNode{
					{Values: []any{".a", 2}, Children: []*query.TreeNode{{Values: []any{"[0]", 2}}}},
					{Values: []any{".b", 1}},
				}}},
			}},
		},
		Notes: []string{"Sizes are retained sizes."},
	}
}

// write renders r in form f.
func write(t *testing.T, r *query.Result, f render.Format, opt render.Options) string {
	t.Helper()
	var b bytes.Buffer
	if err := render.Write(&b, r, f, opt); err != nil {
		t.Fatalf("%v: %v", f, err)
	}
	return b.String()
}

// Text: the warning first, numbers right-aligned and human-readable, the
// empty Shape column left out, no value as an empty cell, the escape shown
// as text, a table without rows left out for its note, a tree indented by
// depth, no trailing blanks.
func TestWriteText(t *testing.T) {
	want := `WARNING: The snapshots look out of order.

Heap of app.heapsnapshot

Classes
Name            Count    Size      %  Example   Growth  Distance
Evil\x1b[2J<b>  1,200  1.5 MB  62.5%  @0xff10  -2.0 kB         3
Item                3   999 B   0.0%      @42                  -

2 of 9 classes

Strings

The dump records no string contents.

Paths
Edge     Objects
(root)         3
  .a           2
    [0]        2
  .b           1

Sizes are retained sizes.
`
	if got := write(t, sample(), render.Text, render.Options{}); got != want {
		t.Errorf("text:\n%s\nwant:\n%s", got, want)
	}
}

// CSV: raw values (bytes and V8 ids as integers, addresses in 0x hex, no
// value as an empty field), every column (Shape too), the dump's string
// exact, a section column as
// there are several sections, a header row again when the columns change
// and a depth column for the tree.
func TestWriteCSV(t *testing.T) {
	want := "section,name,shape,count,size,share,example,growth,distance\n" +
		"Classes,Evil\x1b[2J<b>,,1200,1500000,62.5,0xff10,-2000,3\n" +
		"Classes,Item,,3,999,0.04,42,,100000000\n" +
		"section,text\n" +
		"section,depth,edge,objects\n" +
		"Paths,0,(root),3\n" +
		"Paths,1,.a,2\n" +
		"Paths,2,[0],2\n" +
		"Paths,1,.b,1\n"
	if got := write(t, sample(), render.CSV, render.Options{}); got != want {
		t.Errorf("csv:\n%q\nwant:\n%q", got, want)
	}
	// One section: no section column.
	r := sample()
	r.Sections = r.Sections[2:]
	if got, want := write(t, r, render.CSV, render.Options{}), "depth,edge,objects\n0,(root),3\n1,.a,2\n2,[0],2\n1,.b,1\n"; got != want {
		t.Errorf("csv of one section:\n%q\nwant:\n%q", got, want)
	}
}

// JSON: the generic document with raw values, every column, the inputs,
// the warnings, the chart and a tree's children; the dump's string is
// exact (JSON's own escape).
func TestWriteJSON(t *testing.T) {
	got := write(t, sample(), render.JSON, render.Options{Inputs: []string{"app.heapsnapshot"}})
	for _, want := range []string{
		`"schema_version": 1,
  "query": "sample",
  "inputs": [
    "app.heapsnapshot"
  ],
  "header": [
    "Heap of app.heapsnapshot"
  ],`,
		`"rows": [
        {
          "count": 1200,
          "distance": 3,
          "example": 65296,
          "growth": -2000,
          "name": "Evil\u001b[2J\u003cb\u003e",
          "shape": "",
          "share": 62.5,
          "size": 1500000
        },
        {
          "count": 3,
          "distance": 100000000,
          "example": 42,
          "growth": null,
          "name": "Item",
          "shape": "",
          "share": 0.04,
          "size": 999
        }
      ],
      "chart": {
        "label": "name",
        "value": "size"
      },
      "notes": [
        "2 of 9 classes"
      ]`,
		`"tree": [
        {
          "children": [
            {
              "children": [
                {
                  "edge": "[0]",
                  "objects": 2
                }
              ],
              "edge": ".a",
              "objects": 2
            },`,
		`"warnings": [
    {
      "code": "order_reversed",
      "message": "The snapshots look out of order."
    }
  ]
}
`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("json lacks\n%s\nin\n%s", want, got)
		}
	}
	var d render.Document
	if err := json.Unmarshal([]byte(got), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Sections) != 3 || len(d.Sections[0].Columns) != 8 || d.Sections[0].Columns[3].Kind != "bytes" || d.Sections[1].Rows != nil || d.Notes[0] != "Sizes are retained sizes." {
		t.Errorf("document %+v", d)
	}

	// A result with a JSON form of its own is written in that form.
	r := sample()
	r.JSON = map[string]any{"schema_version": 1, "own": true}
	if got, want := write(t, r, render.JSON, render.Options{}), "{\n  \"own\": true,\n  \"schema_version\": 1\n}\n"; got != want {
		t.Errorf("own JSON form: %q, want %q", got, want)
	}
	// Without warnings, "warnings" is an empty list, never absent.
	r = sample()
	r.Warnings = nil
	if got := write(t, r, render.JSON, render.Options{}); !strings.Contains(got, "\"inputs\": null") || !strings.HasSuffix(got, "\"warnings\": []\n}\n") {
		t.Errorf("no warnings:\n%s", got)
	}
}

// streamed is a document too large to build: it must be asked to write
// itself.
type streamed struct{}

func (streamed) StreamJSON(w io.Writer) error {
	_, err := io.WriteString(w, "{\"streamed\": true}\n")
	return err
}

func TestWriteJSONStreams(t *testing.T) {
	r := sample()
	r.JSON = streamed{} // json.Marshal would fail: it has no exported field
	if got := write(t, r, render.JSON, render.Options{}); got != "{\"streamed\": true}\n" {
		t.Errorf("streamed JSON: %q", got)
	}
}

// HTML: markup from the dump escaped (the chart's labels are cut, with
// escape sequences shown as text, the cells exact), the empty Shape column
// left out, numbers in cells of class n, a tree indented, a bar per row
// with a positive value, "Nothing to show." for a table without rows.
func TestWriteHTML(t *testing.T) {
	got := write(t, sample(), render.HTML, render.Options{})
	want := `<p class="warning">WARNING: The snapshots look out of order.</p>
<p class="note">Heap of app.heapsnapshot</p>
<h3>Classes</h3>
<svg class="chart" role="img" aria-label="Size by Name" width="810" height="52" viewBox="0 0 810 52" xmlns="http://www.w3.org/2000/svg">` +
		`<text x="292" y="19" text-anchor="end" class="l">Evil\x1b[2J&lt;b&gt;</text><rect x="300" y="6" width="420" height="16" rx="2" class="b"><title>Evil\x1b[2J&lt;b&gt;: 1.5 MB</title></rect><text x="726" y="19" class="v">1.5 MB</text>` +
		`<text x="292" y="41" text-anchor="end" class="l">Item</text><rect x="300" y="28" width="1" height="16" rx="2" class="b"><title>Item: 999 B</title></rect><text x="307" y="41" class="v">999 B</text></svg>
<table>
<thead><tr><th>Name</th><th class="n">Count</th><th class="n">Size</th><th class="n">%</th><th class="n">Example</th><th class="n">Growth</th><th class="n">Distance</th></tr></thead>
<tbody>
<tr><td>Evil` + "\x1b" + `[2J&lt;b&gt;</td><td class="n">1,200</td><td class="n">1.5 MB</td><td class="n">62.5%</td><td class="n">@0xff10</td><td class="n">-2.0 kB</td><td class="n">3</td></tr>
<tr><td>Item</td><td class="n">3</td><td class="n">999 B</td><td class="n">0.0%</td><td class="n">@42</td><td class="n"></td><td class="n">-</td></tr>
</tbody>
</table>
<p class="note">2 of 9 classes</p>
<h3>Strings</h3>

<p class="note">Nothing to show.</p>
<p class="note">The dump records no string contents.</p>
<h3>Paths</h3>

<table>
<thead><tr><th>Edge</th><th class="n">Objects</th></tr></thead>
<tbody>
<tr><td>(root)</td><td class="n">3</td></tr>
<tr><td style="padding-left:1.6em">.a</td><td class="n">2</td></tr>
<tr><td style="padding-left:2.8em">[0]</td><td class="n">2</td></tr>
<tr><td style="padding-left:1.6em">.b</td><td class="n">1</td></tr>
</tbody>
</table>


<p class="note">Sizes are retained sizes.</p>
`
	if got != want {
		t.Errorf("html:\n%s\nwant:\n%s", got, want)
	}
}

// A chart draws what holds or gains memory: rows with a negative, zero or
// no value get no bar, and a chart without bars is left out.
func TestChartBars(t *testing.T) {
	growth := func(vals ...any) *query.Result {
		tb := &query.Table{Columns: []query.Column{{Key: "name", Title: "Class", Kind: query.Text}, {Key: "growth", Title: "Growth", Kind: query.BytesDelta}}}
		for i, v := range vals {
			tb.Rows = append(tb.Rows, []any{string(rune('A' + i)), v})
		}
		return &query.Result{Sections: []*query.Section{{Table: tb, Chart: &query.Chart{Label: "name", Value: "growth"}}}}
	}
	got := write(t, growth(int64(5000), int64(-2000), int64(0), nil, int64(2500)), render.HTML, render.Options{})
	for _, want := range []string{`aria-label="Growth by Class" width="810" height="52"`, `<title>A: +5.0 kB</title>`, `<rect x="300" y="28" width="210" height="16" rx="2" class="b"><title>E: +2.5 kB</title>`} {
		if !strings.Contains(got, want) {
			t.Errorf("chart lacks %s:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "<rect"); n != 2 {
		t.Errorf("%d bars:\n%s", n, got)
	}
	if got := write(t, growth(int64(-1)), render.HTML, render.Options{}); strings.Contains(got, "<svg") {
		t.Errorf("a chart without bars:\n%s", got)
	}
}

// A text column is shown when one row has a value in it, in Text and
// HTML; CSV and JSON always have it.
func TestShownColumns(t *testing.T) {
	r := sample()
	r.Sections = r.Sections[:1]
	r.Sections[0].Table.Rows[1][1] = "{a, b}"
	if got := write(t, r, render.Text, render.Options{}); !strings.Contains(got, "Name            Shape   Count") || !strings.Contains(got, "  {a, b}  ") {
		t.Errorf("text without the shape:\n%s", got)
	}
	if got := write(t, r, render.HTML, render.Options{}); !strings.Contains(got, "<th>Shape</th>") || !strings.Contains(got, "<td></td><td class=\"n\">1,200</td>") {
		t.Errorf("html without the shape:\n%s", got)
	}
}

func TestUnknownFormat(t *testing.T) {
	if err := render.Write(io.Discard, sample(), render.Format(9), render.Options{}); err == nil || err.Error() != "render: unknown output form Format(9)" {
		t.Errorf("unknown form: %v", err)
	}
	if s := render.CSV.String(); s != "csv" {
		t.Errorf("CSV is %q", s)
	}
}

// TextTable: '>' right-aligns a column, widths count characters (not
// bytes), the last column is not padded, what a terminal would
// act on is escaped in headers and cells, and WriteRows leaves the header
// out.
func TestTextTable(t *testing.T) {
	tb := render.NewTextTable("Name", ">Size", "Note")
	tb.Add("日本語", "1 kB", "")
	tb.Add("a\x1b[31m", "12 MB", "x")
	var b strings.Builder
	if err := tb.Write(&b); err != nil {
		t.Fatal(err)
	}
	want := "Name        Size  Note\n" +
		"日本語         1 kB  \n" +
		`a\x1b[31m` + "  12 MB  x\n"
	if b.String() != want {
		t.Errorf("table:\n%q\nwant:\n%q", b.String(), want)
	}
	kv := render.NewTextTable()
	kv.Add("File:", "a.heapsnapshot")
	kv.Add("Total size:", "3.4 MB")
	b.Reset()
	if err := kv.WriteRows(&b); err != nil {
		t.Fatal(err)
	}
	if want := "File:        a.heapsnapshot\nTotal size:  3.4 MB\n"; b.String() != want {
		t.Errorf("key/value rows:\n%q\nwant:\n%q", b.String(), want)
	}
	// A column named with a '>' of its own (heapx sql's) sets Right
	// itself.
	raw := &render.TextTable{Header: []string{">x", "n"}, Right: []bool{false, true}}
	raw.Add("a", "1")
	b.Reset()
	if err := raw.Write(&b); err != nil {
		t.Fatal(err)
	}
	if want := ">x  n\na   1\n"; b.String() != want {
		t.Errorf("explicit header:\n%q\nwant:\n%q", b.String(), want)
	}
}

// CSVWriter: the leading cells start every row, and a header row comes
// again only when the columns change (the report's parts in one stream).
func TestCSVWriterLead(t *testing.T) {
	var b strings.Builder
	c := render.NewCSVWriter(&b)
	r := sample()
	for _, s := range []*query.Section{r.Sections[0], r.Sections[0], r.Sections[2]} {
		if err := c.Section([]render.CSVCell{{Key: "part", Value: "p"}, {Key: "section", Value: s.Heading}}, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if len(lines) != 11 || lines[0] != "part,section,name,shape,count,size,share,example,growth,distance" ||
		lines[3] != "p,Classes,Evil\x1b[2J<b>,,1200,1500000,62.5,0xff10,-2000,3" || lines[5] != "part,section,depth,edge,objects" || lines[9] != "p,Paths,1,.b,1" {
		t.Errorf("csv stream:\n%s", b.String())
	}
}

// WriteWarnings is the text Text writes before a result.
func TestWriteWarnings(t *testing.T) {
	var b strings.Builder
	if err := render.WriteWarnings(&b, sample().Warnings); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "WARNING: The snapshots look out of order.\n\n" || !strings.HasPrefix(write(t, sample(), render.Text, render.Options{}), got) {
		t.Errorf("warnings %q", got)
	}
}
