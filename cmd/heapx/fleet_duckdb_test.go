//go:build duckdb

package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/heapx/heapx/formats/parquet"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/internal/stats"
	"github.com/heapx/heapx/query"
)

// docsFleetSQL returns the SQL blocks of docs/sql.md's "Fleets of dumps"
// section, in order.
func docsFleetSQL(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "sql.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "\n## Fleets of dumps\n")
	if i < 0 {
		t.Fatal(`docs/sql.md has no "## Fleets of dumps" section`)
	}
	s = s[i+1:]
	if j := strings.Index(s, "\n## "); j >= 0 {
		s = s[:j]
	}
	var out []string
	for {
		k := strings.Index(s, "```sql\n")
		if k < 0 {
			return out
		}
		s = s[k+len("```sql\n"):]
		end := strings.Index(s, "```")
		out = append(out, s[:end])
		s = s[end+3:]
	}
}

// sqlRows runs heapx sql --json over dir and decodes the rows.
func sqlRows(t *testing.T, dir, stmt string) []map[string]any {
	t.Helper()
	out := ok(t, "sql", "--json", dir, stmt)
	var rows []map[string]any
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(&rows); err != nil {
		t.Fatalf("heapx sql --json: %v in:\n%s", err, out)
	}
	return rows
}

// dumpFacts is what heapx computes of one dump on its own, loaded and
// analysed as every command does: its Summary, leak suspects, totals and
// its Request objects.
type dumpFacts struct {
	fleetDump
	classes            map[string][2]int64 // class name -> retained size, count
	suspects           []parquet.SuspectRow
	nodes, total       int64
	requests, reqSelf  int64
	reqLargestRetained int64
}

// factsOf analyses each dump of the fleet fixture, one at a time.
func factsOf(t *testing.T, dumps []fleetDump) []dumpFacts {
	t.Helper()
	stderr, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	var out []dumpFacts
	for _, d := range dumps {
		_, a, err := loadAndAnalyze(d.path, stderr)
		if err != nil {
			t.Fatal(err)
		}
		f := dumpFacts{fleetDump: d, classes: map[string][2]int64{}, nodes: int64(a.Graph.NumNodes()), total: int64(a.TotalSize())}
		for _, c := range a.Summary() {
			v := f.classes[c.Name]
			f.classes[c.Name] = [2]int64{v[0] + int64(c.Retained), v[1] + int64(c.Count)}
		}
		res, sus, err := query.SuspectsResult(query.Snapshot{Path: d.path, Analysis: a}, 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		tab := res.Sections[0].Table
		col := map[string]int{}
		for i, c := range tab.Columns {
			col[c.Key] = i
		}
		for i, row := range tab.Rows {
			f.suspects = append(f.suspects, parquet.SuspectRow{Class: row[col["class"]].(string), HeldBy: row[col["held_by"]].(string),
				RetainedSize: int64(sus[i].Retained), Share: humanize.Share(sus[i].Retained, a.TotalSize()) / 100})
		}
		for n := range a.Graph.NumNodes() {
			if a.Classes.Names[a.Classes.Of[n]] == "Request" {
				f.requests++
				f.reqSelf += int64(a.Graph.Nodes.Size.At(int(n)))
				f.reqLargestRetained = max(f.reqLargestRetained, int64(a.Dominators.Retained[n]))
			}
		}
		out = append(out, f)
	}
	return out
}

// TestFleetQuestionsInDocs runs docs/sql.md's first five fleet questions
// on DuckDB over the exported fleet fixture and checks each answer against
// the same question answered from heapx's analysis of each dump, one at a
// time; the first two also against heapx fleet's views.
func TestFleetQuestionsInDocs(t *testing.T) {
	t.Parallel()
	dir, dumps := exportedFleet(t)
	qs := docsFleetSQL(t)
	if len(qs) != 6 {
		t.Fatalf("docs/sql.md's fleet section has %d SQL blocks, want the six questions", len(qs))
	}
	facts := factsOf(t, dumps)
	type want = [][]any
	check := func(t *testing.T, q int, cols []string, want want) {
		t.Helper()
		got := sqlRows(t, dir, qs[q])
		if len(got) != len(want) {
			t.Errorf("question %d: %d rows, want %d:\n%v\nwant\n%v", q+1, len(got), len(want), got, want)
			return
		}
		for i, w := range want {
			for j, c := range cols {
				if !sameValue(got[i][c], w[j]) {
					t.Errorf("question %d, row %d, %s: %v, want %v (row %v)", q+1, i, c, got[i][c], w[j], got[i])
				}
			}
		}
	}

	// 1. Classes growing at every dump of a (release, pod) series.
	type seriesKey struct{ release, pod string }
	series := map[seriesKey][]dumpFacts{}
	for _, f := range facts {
		k := seriesKey{f.release, f.pod}
		series[k] = append(series[k], f)
	}
	var growth want
	for k, fs := range series {
		slices.SortFunc(fs, func(a, b dumpFacts) int {
			return cmp.Or(a.captured.Compare(b.captured), strings.Compare(a.id, b.id))
		})
		for class := range fs[0].classes {
			grows := len(fs) >= 2
			for i := 1; i < len(fs) && grows; i++ {
				v, ok := fs[i].classes[class]
				grows = ok && v[0] > fs[i-1].classes[class][0]
			}
			first, last := fs[0].classes[class], fs[len(fs)-1].classes[class]
			if grows && last[1] > first[1] {
				growth = append(growth, []any{k.release, k.pod, class, len(fs), first[0], last[0], last[0] - first[0], last[1] - first[1]})
			}
		}
	}
	slices.SortFunc(growth, func(a, b []any) int {
		return cmp.Or(cmp.Compare(b[6].(int64), a[6].(int64)), strings.Compare(a[0].(string), b[0].(string)),
			strings.Compare(a[1].(string), b[1].(string)), strings.Compare(a[2].(string), b[2].(string)))
	})
	allGrowth := growth
	growth = growth[:min(20, len(growth))]
	if !slices.ContainsFunc(growth, func(r []any) bool { return r[0] == "41" && r[2] == "Request" }) {
		t.Errorf("heapx finds Request growing in no release-41 pod: %v", growth)
	}
	t.Run("1", func(t *testing.T) {
		check(t, 0, []string{"release", "pod", "class", "dumps", "first_retained", "last_retained", "growth", "count_growth"}, growth)
	})
	// heapx fleet's view: one row a class, its growth summed over the
	// series it grows in.
	type classSum struct {
		series        []string
		growth, count int64
	}
	perClass := map[string]*classSum{}
	for _, g := range allGrowth {
		c := perClass[g[2].(string)]
		if c == nil {
			c = &classSum{}
			perClass[g[2].(string)] = c
		}
		c.series = append(c.series, "release="+g[0].(string)+" pod="+g[1].(string))
		c.growth += g[6].(int64)
		c.count += g[7].(int64)
	}
	var doc fleetJSON
	okJSON(t, &doc, "fleet", "--json", "-n", "0", "--by", "release,pod", dir)
	fleetGrowth := doc.table(t, 0)
	if len(fleetGrowth) != len(perClass) {
		t.Errorf("heapx fleet lists %d growing classes, the one-by-one analysis %d", len(fleetGrowth), len(perClass))
	}
	for i, g := range fleetGrowth {
		w := perClass[g["class"].(string)]
		if w == nil || g["series"] != float64(len(w.series)) || g["growth"] != float64(w.growth) || g["count_growth"] != float64(w.count) ||
			(i > 0 && g["growth"].(float64) > fleetGrowth[i-1]["growth"].(float64)) {
			t.Errorf("heapx fleet's growing class %d is %v, want %+v, by growth", i, g, w)
		}
	}

	// 2. Suspects by the number of dumps they appear in.
	type susKey struct{ class, heldBy string }
	type susAcc struct {
		dumps    map[string]bool
		retained int64
		share    float64
	}
	sus := map[susKey]*susAcc{}
	for _, f := range facts {
		for _, s := range f.suspects {
			k := susKey{s.Class, s.HeldBy}
			if sus[k] == nil {
				sus[k] = &susAcc{dumps: map[string]bool{}}
			}
			sus[k].dumps[f.id] = true
			sus[k].retained = max(sus[k].retained, s.RetainedSize)
			sus[k].share = max(sus[k].share, s.Share)
		}
	}
	var suspects want
	for k, a := range sus {
		suspects = append(suspects, []any{k.class, k.heldBy, len(a.dumps), a.retained, a.share})
	}
	slices.SortFunc(suspects, func(a, b []any) int {
		return cmp.Or(cmp.Compare(b[2].(int), a[2].(int)), cmp.Compare(b[3].(int64), a[3].(int64)),
			strings.Compare(a[0].(string), b[0].(string)), strings.Compare(a[1].(string), b[1].(string)))
	})
	if len(suspects) == 0 || suspects[0][0] != "Request" || suspects[0][2] != 3 {
		t.Errorf("heapx's suspects of the fixture's dumps: %v, want Request in three", suspects)
	}
	t.Run("2", func(t *testing.T) {
		check(t, 1, []string{"class", "held_by", "dumps", "max_retained", "max_share"}, suspects)
	})
	fleetSus := doc.table(t, 1)
	for i := range min(len(fleetSus), len(suspects)) {
		g, w := fleetSus[i], suspects[i]
		if g["class"] != w[0] || g["dumps"] != float64(w[2].(int)) || g["max_retained_size"] != float64(w[3].(int64)) {
			t.Errorf("heapx fleet's suspect %d is %v, want %v", i, g, w)
		}
	}

	// 3. Each dump's totals by release and capture time.
	byRelease := slices.Clone(facts)
	slices.SortFunc(byRelease, func(a, b dumpFacts) int {
		return cmp.Or(strings.Compare(a.release, b.release), a.captured.Compare(b.captured), strings.Compare(a.id, b.id))
	})
	var totals want
	for _, f := range byRelease {
		var largest any
		for _, s := range f.suspects {
			largest = max(s.Share, cmp.Or(largest, any(0.0)).(float64))
		}
		totals = append(totals, []any{f.release, f.id, f.captured.UnixMilli(), f.nodes, f.total, len(f.suspects), largest})
	}
	t.Run("3", func(t *testing.T) {
		check(t, 2, []string{"release", "dump_id", "capture_time_ms", "node_count", "total_size", "suspects", "largest_share"}, totals)
	})

	// 4. What release 42 changed per class: means over each release's dumps.
	sums := map[string]map[string]int64{} // release -> class -> retained
	count := map[string]int{}
	for _, f := range facts {
		count[f.release]++
		if sums[f.release] == nil {
			sums[f.release] = map[string]int64{}
		}
		for c, v := range f.classes {
			sums[f.release][c] += v[0]
		}
	}
	mean := func(release, class string) int64 {
		return int64(math.Round(float64(sums[release][class]) / float64(count[release])))
	}
	classes := map[string]bool{}
	for _, r := range []string{"41", "42"} {
		for c := range sums[r] {
			classes[c] = true
		}
	}
	var change want
	for c := range classes {
		b, a := mean("41", c), mean("42", c)
		change = append(change, []any{c, b, a, a - b})
	}
	slices.SortFunc(change, func(x, y []any) int {
		ax, ay := x[3].(int64), y[3].(int64)
		return cmp.Or(cmp.Compare(max(ay, -ay), max(ax, -ax)), strings.Compare(x[0].(string), y[0].(string)))
	})
	t.Run("4", func(t *testing.T) {
		check(t, 3, []string{"class", "before_retained", "after_retained", "change"}, change[:10])
	})

	// 5. Request objects per dump.
	var requests want
	for _, f := range facts {
		if f.requests > 0 {
			requests = append(requests, []any{f.id, f.requests, f.reqSelf, f.reqLargestRetained})
		}
	}
	slices.SortFunc(requests, func(a, b []any) int {
		return cmp.Or(cmp.Compare(b[1].(int64), a[1].(int64)), strings.Compare(a[0].(string), b[0].(string)))
	})
	if len(requests) != 6 || requests[0][1] != int64(4500) {
		t.Errorf("heapx counts Request objects %v, want 4,500 in release 41's last dump", requests)
	}
	t.Run("5", func(t *testing.T) {
		check(t, 4, []string{"dump_id", "objects", "self_size", "largest_retained"}, requests)
	})
}

// TestFleetCompareInDocs runs docs/sql.md's sixth fleet question (which
// classes' count per dump differs between releases 1 and 2) on DuckDB
// over bench/gen-cohorts.js's fleet and checks it: AuditRecord first, each
// class with the means heapx fleet --compare release=1,2 gives it; U
// as package stats computes it from heapx's analysis of each dump, one at
// a time; and the p-values of the normal approximation as R 4.2.2 gives
// them for the same ranks (package stats' test, "constant cohorts" and
// "one pod": wilcox.test(rep(700, 8), rep(100, 8)) and
// wilcox.test(c(2000, 2000, 0, 0, 0, 0, 0, 0), rep(0, 8))), to the
// 2e-7 of the SQL's normal tail.
func TestFleetCompareInDocs(t *testing.T) {
	t.Parallel()
	dir, _, dumps := cohortFleet(t)
	qs := docsFleetSQL(t)
	if len(qs) != 6 {
		t.Fatalf("docs/sql.md's fleet section has %d SQL blocks, want the six questions", len(qs))
	}
	q := qs[5]
	got := sqlRows(t, dir, q)

	// heapx's p-values are exact and the SQL's the normal approximation,
	// so a class near 0.05 may pass in one and not the other: each row
	// of the SQL is compared with heapx's row of that class.
	var all fleetJSON
	okJSON(t, &all, "fleet", dir, "--compare", "release=1,2", "--json", "--alpha", "1", "-n", "0")
	byClass := map[string]map[string]any{}
	for _, r := range all.table(t, 0) {
		byClass[r["class"].(string)] = r
	}
	if len(got) == 0 || got[0]["class"] != "AuditRecord" {
		t.Fatalf("the sixth question's answer %v, want AuditRecord first", got)
	}
	for i, row := range got {
		// heapx's fleet tables cut a class's name as its text does.
		w := byClass[query.Shorten(row["class"].(string), query.MaxNameWidth)]
		if w == nil {
			t.Errorf("row %d, %v: heapx fleet --compare has no such class", i, row)
			continue
		}
		for _, c := range [][2]string{{"mean_a", "count_a"}, {"mean_b", "count_b"}, {"difference", "count_diff"},
			{"difference_bytes", "count_diff_bytes"}} {
			wv := w[c[1]]
			if c[0] == "difference_bytes" {
				wv = math.Round(wv.(float64))
			}
			if !sameValue(got[i][c[0]], wv) {
				t.Errorf("row %d, %s: %v, heapx fleet --compare says %v (row %v)", i, c[0], got[i][c[0]], wv, row)
			}
		}
	}

	facts := factsOf(t, dumps)
	for _, row := range got {
		var x, y []float64
		for _, f := range facts {
			v := float64(f.classes[row["class"].(string)][1])
			if f.release == "1" {
				x = append(x, v)
			} else {
				y = append(y, v)
			}
		}
		if u := stats.MannWhitney(x, y).U; !sameValue(row["u"], u) {
			t.Errorf("%s: U %v, want %v from each dump's analysis", row["class"], row["u"], u)
		}
	}

	p := func(row map[string]any) float64 {
		v, err := row["p"].(json.Number).Float64()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if math.Abs(p(got[0])-0.00013758605716602911) > 2e-7 {
		t.Errorf("first row %v, want AuditRecord with R's p 0.000137586", got[0])
	}
	one := strings.Replace(q, "WHERE p < 0.05", "WHERE class = 'ReplayEntry'", 1)
	if one == q {
		t.Fatal("the sixth question has no WHERE p < 0.05 to replace")
	}
	replay := sqlRows(t, dir, one)
	if len(replay) != 1 || math.Abs(p(replay[0])-0.16995155837391332) > 2e-7 {
		t.Errorf("ReplayEntry %v, want R's p 0.169952", replay)
	}
}

// sameValue compares a value of heapx sql --json (json.Number, string or
// nil) with one computed in Go; floats to 12 significant digits, as the
// engines sum them in their own order.
func sameValue(got, want any) bool {
	switch w := want.(type) {
	case nil:
		return got == nil
	case string:
		return got == w
	case float64:
		n, ok := got.(json.Number)
		if !ok {
			return false
		}
		g, err := n.Float64()
		return err == nil && math.Abs(g-w) <= 1e-12*max(math.Abs(w), 1e-300)
	}
	n, ok := got.(json.Number)
	return ok && n.String() == fmt.Sprint(want)
}

// TestSQLParquetDir checks heapx sql over a Parquet directory: the views
// read every partition (or the one given), DuckDB's types come out as
// heapx prints SQLite's, only reading statements run and no file outside
// the directory is reached, and bad directories are one clear error.
func TestSQLParquetDir(t *testing.T) {
	t.Parallel()
	dir, dumps := exportedFleet(t)
	facts := factsOf(t, dumps[:1])

	rows := sqlRows(t, dir, `SELECT count(*) AS dumps, count(DISTINCT dump) AS partitions FROM dumps`)
	if len(rows) != 1 || rows[0]["dumps"].(json.Number).String() != "6" || rows[0]["partitions"].(json.Number).String() != "6" {
		t.Errorf("the dumps view: %v, want 6 dumps in 6 partitions (the dump column from the directory names)", rows)
	}
	one := parquet.PartitionDir(dir, dumps[0].id)
	rows = sqlRows(t, one, `SELECT count(*) AS objects, max(dump_id) AS id FROM objects`)
	if len(rows) != 1 || rows[0]["objects"].(json.Number).String() != fmt.Sprint(facts[0].nodes) || rows[0]["id"] != dumps[0].id {
		t.Errorf("the objects view of partition %s: %v, want %d objects", one, rows, facts[0].nodes)
	}

	rows = sqlRows(t, dir, `SELECT sum(node_count)::HUGEINT AS huge, true AS yes, [1, 2] AS list, MAP {'a': 1} AS map,
		TIMESTAMP '2026-11-25 06:00:00' AS ts, 1.25::DECIMAL(4, 2) AS dec, NULL AS nothing, 'x' || 'y' AS text FROM dumps`)
	want := map[string]string{"huge": "", "yes": "1", "list": "[1,2]", "map": `{"a":1}`, "ts": "2026-11-25T06:00:00Z", "dec": "1.25",
		"nothing": "<nil>", "text": "xy"}
	for k, w := range want {
		if g := fmt.Sprint(rows[0][k]); w != "" && g != w {
			t.Errorf("%s: %q, want %q", k, g, w)
		}
	}
	if _, ok := rows[0]["huge"].(json.Number); !ok {
		t.Errorf("a HUGEINT sum is %v (%T), want a number", rows[0]["huge"], rows[0]["huge"])
	}
	if csv := ok(t, "sql", "--csv", dir, `SELECT 'a,b' AS s, 2 AS n`); csv != "s,n\n\"a,b\",2\n" {
		t.Errorf("heapx sql --csv DIR: %q", csv)
	}

	outside := filepath.Join(t.TempDir(), "out.csv")
	for _, c := range []struct{ stmt, want string }{
		{"COPY dumps TO '" + filepath.Join(dir, "copy.csv") + "'", "read-only"},
		{"COPY dumps TO '" + outside + "'", "disabled by configuration"},
		{"CREATE TABLE t AS SELECT 1", "read-only"},
		{"INSTALL httpfs", "read-only"},
		{"SET enable_external_access = true", "read-only"},
		{"SELECT * FROM read_csv('" + filepath.Join("..", "..", "go.mod") + "')", "disabled by configuration"},
		{"SELECT 1; SELECT 2", "one SQL statement"},
		{"  ;  ", "no SQL statement"},
		{"SELECT nope FROM dumps", "nope"},
	} {
		r := heapx(t, "sql", dir, c.stmt)
		if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, "heapx: "+dir+": ") || !strings.Contains(r.stderr, c.want) {
			t.Errorf("heapx sql DIR %q: exit %d, stdout %q, stderr %q; want exit 1 and %q", c.stmt, r.code, r.stdout, r.stderr, c.want)
		}
	}
	for _, f := range []string{outside, filepath.Join(dir, "copy.csv")} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("heapx sql wrote %s", f)
		}
	}
	if r := heapx(t, "sql", "--no-cache", dir, "SELECT 1"); r.code != 1 || !strings.Contains(r.stderr, "is a directory, queried as it is") {
		t.Errorf("heapx sql --no-cache DIR: exit %d, %q", r.code, r.stderr)
	}

	// A damaged table, and a partition of another version.
	for _, c := range []struct{ name, want string }{{"cut", ""}, {"version 2", "version 2"}} {
		bad := t.TempDir()
		part := filepath.Join(bad, filepath.Base(one))
		if err := os.Mkdir(part, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, table := range []string{parquet.TableDumps, parquet.TableObjects} {
			b, err := os.ReadFile(parquet.TableFile(one, table))
			if err != nil {
				t.Fatal(err)
			}
			if c.name == "cut" && table == parquet.TableObjects {
				b = b[:len(b)/2]
			}
			if err := os.WriteFile(parquet.TableFile(part, table), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want := []string{parquet.TableFile(part, parquet.TableObjects)}
		if c.name == "version 2" {
			v2 := filepath.Join(bad, parquet.PartitionPrefix+"0123456789abcdef")
			if err := os.Mkdir(v2, 0o755); err != nil {
				t.Fatal(err)
			}
			writeDumpsVersion(t, one, v2, 2)
			want = []string{"partition(s) of version 1 (dump=" + dumps[0].id + ")", "partition(s) of version 2 (dump=0123456789abcdef)",
				"heapx reads version 1"}
		}
		r := heapx(t, "sql", bad, "SELECT count(*) FROM objects")
		if r.code != 1 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("heapx sql over a directory with a %s partition: exit %d, stdout %q, stderr %q", c.name, r.code, r.stdout, r.stderr)
		}
		for _, w := range want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("heapx sql over a directory with a %s partition: %q does not say %q", c.name, r.stderr, w)
			}
		}
	}
	empty := t.TempDir()
	if r := heapx(t, "sql", empty, "SELECT 1"); r.code != 1 || !strings.Contains(r.stderr, "no dump=<id> directory") {
		t.Errorf("heapx sql over an empty directory: exit %d, %q", r.code, r.stderr)
	}
}
