package report

import (
	"html/template"
	"io"
	"strings"

	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/render"
)

// writeHTML writes the report as one self-contained HTML page: no
// scripts, fonts or images from elsewhere, so it can be attached to a bug
// and opened offline. Each part is its result's HTML fragment (render.HTML,
// charts as inline SVG) under the part's title; the page brings the style.
func (r *Report) writeHTML(w io.Writer) error {
	return page.Execute(w, r)
}

// resultHTML is the HTML fragment of res, for the page's template.
func resultHTML(res *query.Result) (template.HTML, error) {
	var b strings.Builder
	if err := render.Write(&b, res, render.HTML, render.Options{}); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil // render.HTML escapes what it writes
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"result": resultHTML,
	"flame":  flameHTML,
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
.flame-view{display:none}
.flame-view.root,.flame-view:target{display:block}
.flames:has(.flame-view:target) .flame-view.root:not(:target){display:none}
svg.flame{max-width:100%;height:auto;display:block;margin:8px 0}
svg.flame rect{stroke:#fff;stroke-width:1}
svg.flame a:hover rect{opacity:.8}
svg.flame text{font:12px system-ui,sans-serif;fill:#fff;pointer-events:none}
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
{{result .Result}}</section>
{{end}}{{with flame .}}<section class="part" id="flame">
<h2>Flame graph of retained size</h2>
<p class="note">Each box is the objects of one class that the box above dominates, as wide as what they retain (the boxes of at least 1% of the heap, ten levels down). Click a box to zoom to it; click a step of the path above to zoom out.</p>
{{.}}</section>
{{end}}
</main>
</body>
</html>
`))
