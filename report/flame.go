package report

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/inspect"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/query"
)

// The report's flame graph: flameDepth levels of the boxes retaining at
// least flameMinShare of the heap, so at most flameDepth/flameMinShare
// boxes (1,000) whatever the dump. The page cannot ask for more, so it
// goes deeper than heapx serve's first picture.
const (
	flameDepth    = 10
	flameMinShare = 0.01
	flameWidth    = 1000 // the drawing's width in SVG units
	flameRow      = 20   // a level's height
)

// flameHTML is the page's flame graph of retained size over the dominator
// tree (inspect.FlameTree), drawn without scripts: each box is a link to
// a view of its own (shown by CSS's :target) zoomed to it, which names its
// objects, their count and the largest. "" for a dump without classes.
func flameHTML(r *Report) (template.HTML, error) {
	a := r.File.A
	if a == nil || a.Classes == nil {
		return "", nil
	}
	first, kids := analysis.DominatorChildren(a.Dominators)
	top, err := inspect.FlameTree(a, first, kids, a.Graph.Root, nil, flameDepth, flameMinShare)
	if err != nil {
		return "", err
	}
	f := &flamePage{a: a, nm: analysis.NewNamer(a.Graph, a.DOM)}
	f.b.WriteString(`<div class="flames">`)
	f.view(&top, []*inspect.FlameBox{&top})
	f.b.WriteString(`</div>`)
	return template.HTML(f.b.String()), nil // every text is escaped as written
}

// flamePage writes the views of the flame graph, one per box.
type flamePage struct {
	a  *analysis.Analysis
	nm *analysis.Namer
	b  strings.Builder
}

// anchor is the id of box's view.
func anchor(box *inspect.FlameBox) string {
	var b strings.Builder
	b.WriteString("flame-r")
	for _, c := range box.Path {
		b.WriteByte('-')
		b.WriteString(strconv.Itoa(int(c)))
	}
	return b.String()
}

// name is what a box is called: its class, or the root's name.
func (f *flamePage) name(box *inspect.FlameBox) string {
	if box.Class < 0 {
		return "(root)"
	}
	return f.a.Classes.Names[box.Class]
}

// view writes box's view (the path to it from the root, the icicle from
// it, its objects), then those of the boxes under it.
func (f *flamePage) view(box *inspect.FlameBox, path []*inspect.FlameBox) {
	class := "flame-view"
	if len(box.Path) == 0 {
		class += " root"
	}
	fmt.Fprintf(&f.b, `<div class="%s" id="%s"><p class="note">`, class, anchor(box))
	for i, p := range path {
		if i > 0 {
			f.b.WriteString(" › ")
		}
		fmt.Fprintf(&f.b, `<a href="#%s">%s</a>`, anchor(p), template.HTMLEscapeString(query.Shorten(f.name(p), 60)))
	}
	f.b.WriteString(`</p>`)
	rows := depthOf(box)
	fmt.Fprintf(&f.b, `<svg class="flame" role="img" aria-label="flame graph of retained size from %s" viewBox="0 0 %d %d" width="%d" height="%d" xmlns="http://www.w3.org/2000/svg">`,
		template.HTMLEscapeString(f.name(box)), flameWidth, rows*flameRow, flameWidth, rows*flameRow)
	f.boxes(box, box.Retained, 0, 0)
	f.b.WriteString(`</svg>`)
	row := f.a.Row(f.nm, box.Largest)
	more := ""
	if box.Cut {
		more = " Some of what they dominate is too small to draw at this scale (under 1% of the heap), or deeper than the report draws: heapx serve's flame graph zooms further."
	}
	fmt.Fprintf(&f.b, `<p class="note">%s: %s object%s retaining %s; the largest, %s %s, retains %s.%s</p></div>`,
		template.HTMLEscapeString(f.name(box)), humanize.Thousands(uint64(box.Count)), plural(box.Count), humanize.Size(box.Retained),
		template.HTMLEscapeString(query.Shorten(row.Name, 80)), template.HTMLEscapeString(query.IDText(f.a.Graph, row.ID)),
		humanize.Size(row.Retained), more)
	for i := range box.Children {
		c := &box.Children[i]
		f.view(c, append(path[:len(path):len(path)], c))
	}
}

// boxes draws box at x (in units of the drawing) and level depth, as wide
// as its share of total, and the boxes under it.
func (f *flamePage) boxes(box *inspect.FlameBox, total uint64, x float64, depth int) {
	w := float64(flameWidth) * float64(box.Retained) / float64(max(total, 1))
	label := fmt.Sprintf("%s × %s: %s", f.name(box), humanize.Thousands(uint64(box.Count)), humanize.Size(box.Retained))
	// A hue per class, so a class's boxes look alike at every level.
	fmt.Fprintf(&f.b, `<a href="#%s"><title>%s</title><rect x="%.2f" y="%d" width="%.2f" height="%d" fill="hsl(%d,45%%,42%%)"/>`,
		anchor(box), template.HTMLEscapeString(label), x, depth*flameRow, w, flameRow-1, (int(box.Class)*47+210+360)%360)
	if chars := int(w / 7); chars >= 4 {
		fmt.Fprintf(&f.b, `<text x="%.2f" y="%d">%s</text>`, x+3, depth*flameRow+14, template.HTMLEscapeString(query.Shorten(label, chars)))
	}
	f.b.WriteString(`</a>`)
	for i := range box.Children {
		c := &box.Children[i]
		f.boxes(c, total, x, depth+1)
		x += float64(flameWidth) * float64(c.Retained) / float64(max(total, 1))
	}
}

// depthOf is how many levels box's icicle has.
func depthOf(box *inspect.FlameBox) int {
	d := 0
	for i := range box.Children {
		d = max(d, depthOf(&box.Children[i]))
	}
	return d + 1
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
