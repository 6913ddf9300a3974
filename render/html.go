package render

import (
	"fmt"
	"html/template"
	"io"
	"math"

	"github.com/heapx/heapx/query"
)

// writeHTML writes r as an HTML fragment (see HTML).
func writeHTML(w io.Writer, r *query.Result) error {
	return fragment.Execute(w, r)
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
		cols, shown := columns(s)
		for _, i := range shown {
			hs.Header = append(hs.Header, htmlCell{Text: cols[i].Title, Numeric: isNumeric(cols[i].Kind)})
		}
		eachRow(s, func(vals []any, depth int) error {
			cells := make([]htmlCell, len(shown))
			for j, i := range shown {
				if i < len(vals) {
					cells[j] = htmlCell{Text: query.FormatValue(cols[i].Kind, vals[i]), Numeric: isNumeric(cols[i].Kind)}
				}
			}
			if len(cells) > 0 {
				cells[0].Indent = depth
			}
			hs.Rows = append(hs.Rows, cells)
			return nil
		})
		if s.Table != nil && s.Chart != nil {
			hs.Chart = barChart(s.Table, s.Chart)
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

// fragment is the HTML form of a result. The report's page puts it in a
// <section> of its own under the part's title.
var fragment = template.Must(template.New("result").Funcs(template.FuncMap{
	"sections": sections,
	"indent":   func(n int) template.CSS { return template.CSS(fmt.Sprintf("padding-left:%.1fem", 0.4+1.2*float64(n))) },
}).Parse(`{{range .Warnings}}<p class="warning">WARNING: {{.Message}}</p>
{{end}}{{range .Header}}<p class="note">{{.}}</p>{{end}}
{{range sections .}}{{if .Heading}}<h3>{{.Heading}}</h3>{{end}}
{{.Chart}}
{{if .Rows}}<table>
<thead><tr>{{range .Header}}<th{{if .Numeric}} class="n"{{end}}>{{.Text}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range .}}<td{{if .Numeric}} class="n"{{end}}{{if .Indent}} style="{{indent .Indent}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</tbody>
</table>{{else}}<p class="note">Nothing to show.</p>{{end}}
{{range .Notes}}<p class="note">{{.}}</p>{{end}}
{{end}}
{{range .Notes}}<p class="note">{{.}}</p>{{end}}
`))
