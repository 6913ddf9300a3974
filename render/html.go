package render

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"

	"github.com/heapx/heapx/humanize"
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
		switch {
		case s.Table != nil && s.Chart != nil && s.Chart.Kind == query.ChartLine:
			hs.Chart = lineChart(s.Table, s.Chart)
		case s.Table != nil && s.Chart != nil:
			hs.Chart = barChart(s.Table, s.Chart)
		}
		out = append(out, hs)
	}
	return out
}

// chartColumns returns the indexes of the chart's Label and Value columns
// in t, -1 for one it does not have.
func chartColumns(t *query.Table, c *query.Chart) (label, value int) {
	label, value = -1, -1
	for i, col := range t.Columns {
		if col.Key == c.Label {
			label = i
		}
		if col.Key == c.Value {
			value = i
		}
	}
	return label, value
}

// barChart draws a horizontal bar per table row (at most 15): the Label
// column's text and a bar as long as the Value column's share of the
// largest value. Negative values (shrinking classes in a diff) are left
// out: the chart shows what holds or gains memory.
func barChart(t *query.Table, c *query.Chart) template.HTML {
	li, vi := chartColumns(t, c)
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

// lineColors tell a line chart's lines apart (presentation attributes,
// not styles: the report's page allows no inline style sheet).
var lineColors = []string{"#3b6fd8", "#d8573b", "#2f9e5a", "#a23bd8", "#d8a23b", "#3bb5d8", "#6b7280"}

// lineChart draws the rows as lines over the Label column (numeric, the x
// axis): one for the Value column and one for each numeric column after
// it, with a legend of the column titles. A row whose x is not a number
// is left out.
func lineChart(t *query.Table, c *query.Chart) template.HTML {
	xi, vi := chartColumns(t, c)
	if xi < 0 || vi < 0 || len(t.Rows) < 2 {
		return ""
	}
	var lines []int
	for i := vi; i < len(t.Columns) && len(lines) < len(lineColors); i++ {
		if k := t.Columns[i].Kind; k == query.Count || k == query.Bytes {
			lines = append(lines, i)
		}
	}
	var xs []float64
	var rows [][]any
	minX, maxX, maxY := math.Inf(1), math.Inf(-1), 0.0
	for _, row := range t.Rows {
		x := toFloat(row[xi])
		if math.IsNaN(x) {
			continue
		}
		xs = append(xs, x)
		rows = append(rows, row)
		minX, maxX = min(minX, x), max(maxX, x)
		for _, i := range lines {
			if y := toFloat(row[i]); !math.IsNaN(y) {
				maxY = max(maxY, y)
			}
		}
	}
	if len(rows) < 2 || maxX <= minX || maxY <= 0 {
		return ""
	}
	const left, top, plotW, plotH, legendRow = 80, 10, 640, 200, 18
	h := top + plotH + 28 + legendRow*len(lines)
	px := func(x float64) float64 { return left + (x-minX)/(maxX-minX)*plotW }
	py := func(y float64) float64 { return top + plotH - y/maxY*plotH }
	yKind := t.Columns[vi].Kind
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" role="img" aria-label="%s over %s" width="%d" height="%d" viewBox="0 0 %d %d" xmlns="http://www.w3.org/2000/svg">`,
		template.HTMLEscapeString(t.Columns[vi].Title), template.HTMLEscapeString(t.Columns[xi].Title), left+plotW+20, h, left+plotW+20, h)
	fmt.Fprintf(&b, `<path d="M%d %d V%d H%d" fill="none" stroke="#9aa3b2"/>`, left, top, top+plotH, left+plotW)
	for _, y := range []float64{0, maxY / 2, maxY} {
		label := humanize.Thousands(uint64(math.Round(y)))
		if yKind == query.Bytes {
			label = humanize.Size(uint64(math.Round(y)))
		}
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" class="v">%s</text>`, left-6, py(y)+4, template.HTMLEscapeString(label))
	}
	for _, x := range []float64{minX, maxX} {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" class="v">%s</text>`, px(x), top+plotH+16,
			template.HTMLEscapeString(query.FormatValue(t.Columns[xi].Kind, rowValue(rows, xs, x, xi))))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" class="v">%s</text>`, left+plotW/2, top+plotH+16, template.HTMLEscapeString(t.Columns[xi].Title))
	for n, i := range lines {
		color := lineColors[n]
		b.WriteString(`<polyline fill="none" stroke-width="2" stroke="` + color + `" points="`)
		for r, row := range rows {
			y := toFloat(row[i])
			if math.IsNaN(y) {
				y = 0
			}
			fmt.Fprintf(&b, "%.1f,%.1f ", px(xs[r]), py(y))
		}
		fmt.Fprintf(&b, `"><title>%s</title></polyline>`, template.HTMLEscapeString(t.Columns[i].Title))
		ly := top + plotH + 28 + n*legendRow
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="14" height="4" fill="%s"/><text x="%d" y="%d" class="l">%s</text>`,
			left, ly+2, color, left+20, ly+8, template.HTMLEscapeString(query.Shorten(t.Columns[i].Title, 90)))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // every text in it was escaped above
}

// rowValue is the x column's value of the row whose x is x.
func rowValue(rows [][]any, xs []float64, x float64, xi int) any {
	for r := range rows {
		if xs[r] == x {
			return rows[r][xi]
		}
	}
	return nil
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
