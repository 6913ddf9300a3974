package report

import (
	"fmt"
	"html/template"
	"io"
	"math"

	"github.com/heapx/heapx/query"
)

// WriteHTML writes the report as one self-contained HTML page: no
// scripts, fonts or images from elsewhere, so it can be attached to a bug
// and opened offline. Charts are inline SVG drawn here.
func (r *Report) WriteHTML(w io.Writer) error {
	return page.Execute(w, r)
}

// htmlSection is a section laid out for the template.
type htmlSection struct {
	Heading string
	Header  []htmlCell
	Rows    [][]htmlCell
	Notes   []string
	Chart   template.HTML
}

// htmlCell is one formatted table cell.
type htmlCell struct {
	Text    string
	Numeric bool
	Indent  int // tree depth
}

// sections lays out a result's sections.
func sections(res *query.Result) []htmlSection {
	var out []htmlSection
	for _, s := range res.Sections {
		hs := htmlSection{Heading: s.Heading, Notes: s.Notes}
		var cols []query.Column
		var shown []int
		if s.Table != nil {
			cols, shown = s.Table.Columns, s.Table.Shown()
		} else if s.Tree != nil {
			cols = s.Tree.Columns
			for i := range cols {
				shown = append(shown, i)
			}
		}
		for _, i := range shown {
			hs.Header = append(hs.Header, htmlCell{Text: cols[i].Title, Numeric: cols[i].Kind != query.Text})
		}
		row := func(vals []any, depth int) []htmlCell {
			cells := make([]htmlCell, len(shown))
			for j, i := range shown {
				if i < len(vals) {
					cells[j] = htmlCell{Text: query.FormatValue(cols[i].Kind, vals[i]), Numeric: cols[i].Kind != query.Text}
				}
			}
			if len(cells) > 0 {
				cells[0].Indent = depth
			}
			return cells
		}
		if s.Table != nil {
			for _, v := range s.Table.Rows {
				hs.Rows = append(hs.Rows, row(v, 0))
			}
			if s.Chart != nil {
				hs.Chart = barChart(s.Table, s.Chart)
			}
		}
		if s.Tree != nil {
			var walk func(nodes []*query.TreeNode, depth int)
			walk = func(nodes []*query.TreeNode, depth int) {
				for _, n := range nodes {
					hs.Rows = append(hs.Rows, row(n.Values, depth))
					walk(n.Children, depth+1)
				}
			}
			walk(s.Tree.Roots, 0)
		}
		out = append(out, hs)
	}
	return out
}

// barChart draws a horizontal bar per table row (at most 15): the Label
// column's text and a bar as long as the Value column's share of the
// largest value. Negative values (shrinking classes in a diff) are left
// out: the chart shows what holds or gains memory.
func barChart(t *query.Table, c *query.Chart) template.HTML {
	li, vi := -1, -1
	for i, col := range t.Columns {
		if col.Key == c.Label {
			li = i
		}
		if col.Key == c.Value {
			vi = i
		}
	}
	if li < 0 || vi < 0 {
		return ""
	}
	type bar struct {
		label, value string
		v            float64
	}
	var bars []bar
	var maxV float64
	for _, row := range t.Rows {
		if len(bars) == 15 {
			break
		}
		v := toFloat(row[vi])
		if v <= 0 || math.IsNaN(v) {
			continue
		}
		bars = append(bars, bar{query.Shorten(fmt.Sprint(row[li]), 40), query.FormatValue(t.Columns[vi].Kind, row[vi]), v})
		maxV = max(maxV, v)
	}
	if len(bars) == 0 {
		return ""
	}
	const labelW, barW, rowH, valueW = 300, 420, 22, 90
	h := len(bars)*rowH + 8
	svg := fmt.Sprintf(`<svg class="chart" role="img" aria-label="%s by %s" width="%d" height="%d" viewBox="0 0 %d %d" xmlns="http://www.w3.org/2000/svg">`,
		template.HTMLEscapeString(t.Columns[vi].Title), template.HTMLEscapeString(t.Columns[li].Title),
		labelW+barW+valueW, h, labelW+barW+valueW, h)
	for i, b := range bars {
		y := 4 + i*rowH
		w := int(math.Round(b.v / maxV * barW))
		svg += fmt.Sprintf(`<text x="%d" y="%d" text-anchor="end" class="l">%s</text>`, labelW-8, y+15, template.HTMLEscapeString(b.label))
		svg += fmt.Sprintf(`<rect x="%d" y="%d" width="%d" height="%d" rx="2" class="b"><title>%s: %s</title></rect>`,
			labelW, y+2, max(w, 1), rowH-6, template.HTMLEscapeString(b.label), template.HTMLEscapeString(b.value))
		svg += fmt.Sprintf(`<text x="%d" y="%d" class="v">%s</text>`, labelW+max(w, 1)+6, y+15, template.HTMLEscapeString(b.value))
	}
	svg += `</svg>`
	return template.HTML(svg) // every text in it was escaped above
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	case uint32:
		return float64(x)
	case uint64:
		return float64(x)
	case float64:
		return x
	}
	return math.NaN()
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"sections": sections,
	"indent":   func(n int) template.CSS { return template.CSS(fmt.Sprintf("padding-left:%.1fem", 0.4+1.2*float64(n))) },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>heapx report: {{.File.Path}}</title>
<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2b4f;color:#fff;padding:18px 28px}
header h1{margin:0;font-size:20px;font-weight:600}
header p{margin:4px 0 0;opacity:.8}
main{max-width:1200px;margin:0 auto;padding:20px 28px 60px}
section.part{background:#fff;border:1px solid #dde1e8;border-radius:8px;margin:18px 0;padding:14px 20px}
h2{font-size:17px;margin:4px 0 10px}
h3{font-size:14px;margin:16px 0 6px;font-weight:600}
table{border-collapse:collapse;width:100%;font-size:13px;margin:6px 0}
th,td{padding:4px 8px;border-bottom:1px solid #eceff3;text-align:left;vertical-align:top}
th{background:#f0f2f6;font-weight:600}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td{overflow-wrap:anywhere}
p.note{color:#4a5568;margin:6px 0}
dl.overview{display:grid;grid-template-columns:max-content 1fr;gap:4px 18px;margin:0}
dl.overview dt{font-weight:600}
dl.overview dd{margin:0}
.fail{background:#fdecec;border-color:#e8a0a0}
.ok{background:#edf8ef;border-color:#a6d8b0}
svg.chart{max-width:100%;height:auto;display:block;margin:8px 0}
svg.chart .l{font:12px system-ui,sans-serif;fill:#1d2330}
svg.chart .v{font:12px system-ui,sans-serif;fill:#4a5568}
svg.chart .b{fill:#3b6fd8}
</style>
</head>
<body>
<header>
<h1>heapx report</h1>
<p>{{.File.Path}}{{if .Baselines}} compared with {{range $i, $b := .Baselines}}{{if $i}}, {{end}}{{$b.Path}}{{end}}{{end}}</p>
</header>
<main>
{{if .Warnings}}<section class="part fail" id="warnings"><h2>Warnings</h2>{{range .Warnings}}<p>{{.Message}}</p>{{end}}</section>{{end}}
<section class="part">
<h2>Overview</h2>
<dl class="overview">
{{range .Overview}}<dt>{{index . 0}}</dt><dd>{{index . 1}}</dd>
{{end}}</dl>
</section>
{{if .Failures}}<section class="part fail"><h2>Gates failed</h2>{{range .Failures}}<p>{{.}}</p>{{end}}</section>{{end}}
{{range .Parts}}<section class="part" id="{{.Key}}">
<h2>{{.Title}}</h2>
{{range .Result.Header}}<p class="note">{{.}}</p>{{end}}
{{range sections .Result}}{{if .Heading}}<h3>{{.Heading}}</h3>{{end}}
{{.Chart}}
{{if .Rows}}<table>
<thead><tr>{{range .Header}}<th{{if .Numeric}} class="n"{{end}}>{{.Text}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range .}}<td{{if .Numeric}} class="n"{{end}}{{if .Indent}} style="{{indent .Indent}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</tbody>
</table>{{else}}<p class="note">Nothing to show.</p>{{end}}
{{range .Notes}}<p class="note">{{.}}</p>{{end}}
{{end}}
{{range .Result.Notes}}<p class="note">{{.}}</p>{{end}}
</section>
{{end}}
</main>
</body>
</html>
`))
