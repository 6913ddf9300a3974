package sqlite

import (
	"strings"

	"github.com/heapx/heapx/model"
)

// coreSchema is docs/format.md section 6.1 to 6.3, table for table. The
// tables are created empty; indexes come after the bulk insert (indexSQL),
// since building an index once from sorted runs is several times faster
// than updating it row by row.
const coreSchema = `
CREATE TABLE metadata   (seq INTEGER PRIMARY KEY, key TEXT NOT NULL, value TEXT NOT NULL);
CREATE TABLE strings    (stringid INTEGER PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE node_types (nodetypeid INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL,
                         table_name TEXT);
CREATE TABLE node_type_fields (nodetypeid INTEGER NOT NULL, seq INTEGER NOT NULL, name TEXT NOT NULL,
                         kind TEXT NOT NULL, PRIMARY KEY (nodetypeid, seq));
CREATE TABLE edge_types (edgetypeid INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL,
                         strength TEXT NOT NULL, name_kind TEXT NOT NULL);
CREATE TABLE node (
    identifier       INTEGER PRIMARY KEY,
    seq              INTEGER NOT NULL UNIQUE,
    nodetypeid       INTEGER NOT NULL,
    name             INTEGER NOT NULL,
    self_size        INTEGER NOT NULL,
    v8_trace_node_id INTEGER,
    v8_detachedness  INTEGER
);
CREATE TABLE edge (
    seq        INTEGER PRIMARY KEY,
    source     INTEGER NOT NULL,
    edgetypeid INTEGER NOT NULL,
    label      INTEGER NOT NULL,
    dest       INTEGER,
    smi        INTEGER
);
CREATE TABLE v8_location       (seq INTEGER PRIMARY KEY, node_identifier INTEGER NOT NULL,
                                script_id INTEGER NOT NULL, line INTEGER NOT NULL, "column" INTEGER NOT NULL,
                                script_node_identifier INTEGER);
CREATE TABLE v8_trace_function (idx INTEGER PRIMARY KEY, function_id INTEGER NOT NULL, name INTEGER NOT NULL,
                                script_name INTEGER NOT NULL, script_id INTEGER NOT NULL,
                                line INTEGER NOT NULL, "column" INTEGER NOT NULL);
CREATE TABLE v8_trace_node     (idx INTEGER PRIMARY KEY, parent INTEGER NOT NULL, id INTEGER NOT NULL,
                                function_index INTEGER NOT NULL, count INTEGER NOT NULL, size INTEGER NOT NULL);
CREATE TABLE v8_sample         (seq INTEGER PRIMARY KEY, timestamp_us INTEGER NOT NULL,
                                last_assigned_id INTEGER NOT NULL);
CREATE TABLE v8_section        (seq INTEGER PRIMARY KEY, name TEXT NOT NULL,
                                fields TEXT NOT NULL,
                                "values" TEXT NOT NULL);
CREATE TABLE heapx_gc_root     (seq INTEGER PRIMARY KEY, node_identifier INTEGER NOT NULL, kind TEXT NOT NULL);
CREATE TABLE extension_record  (seq INTEGER PRIMARY KEY, record_type TEXT NOT NULL, data TEXT NOT NULL);
CREATE TABLE heapx_result (node_identifier INTEGER PRIMARY KEY, shallow_size INTEGER NOT NULL,
                           retained_size INTEGER NOT NULL, dominator INTEGER,
                           distance INTEGER NOT NULL);
`

// indexSQL are the indexes, built after the rows are in (edge_source may
// be built as the edges go in; see write). edge_source and edge_dest are
// the spec's (6.1); the others serve the questions people ask first
// (docs/format.md 6.5): the largest objects (heapx_result_retained), the
// objects of one class or name (strings_data, then node_name) or of one
// type (node_types_name, then node_type), and an object's allocation site
// (v8_location_node). A filter on nodes_full's name or type without them
// reads every result row and looks its node up (docs/benchmarks.md). The
// text is indexed too because without statistics (the writer runs no
// ANALYZE) SQLite takes every table to be large and would rather scan
// heapx_result than strings; an object's dominator-tree children still
// have no index.
var indexSQL = []struct{ table, sql string }{
	{"edge", `CREATE INDEX edge_source ON edge(source)`},
	{"edge", `CREATE INDEX edge_dest   ON edge(dest)`},
	{"strings", `CREATE INDEX strings_data ON strings(data)`},
	{"node_types", `CREATE INDEX node_types_name ON node_types(name)`},
	{"node", `CREATE INDEX node_name ON node(name)`},
	{"node", `CREATE INDEX node_type ON node(nodetypeid)`},
	{"v8_location", `CREATE INDEX v8_location_node ON v8_location(node_identifier)`},
	{"heapx_result", `CREATE INDEX heapx_result_retained ON heapx_result(retained_size)`},
}

// commonViews are the views every heapx file has: the spec's two (6.4)
// and heapx's edges_full, with the names at both ends of an edge. The
// fourth, nodes_full, depends on the results (nodesFull).
const commonViews = `
CREATE VIEW nodes_named AS
  SELECT n.identifier, n.seq, t.name AS type, t.category, s.data AS name, n.self_size
  FROM node n JOIN node_types t ON t.nodetypeid = n.nodetypeid JOIN strings s ON s.stringid = n.name;
CREATE VIEW edges_named AS
  SELECT e.seq, e.source, t.name AS type, t.category, t.strength,
         CASE t.name_kind WHEN 'index' THEN CAST(e.label AS TEXT) ELSE s.data END AS label, e.dest, e.smi
  FROM edge e JOIN edge_types t ON t.edgetypeid = e.edgetypeid
  LEFT JOIN strings s ON t.name_kind = 'string' AND s.stringid = e.label;
CREATE VIEW edges_full AS
  SELECT e.seq, e.source, sn.data AS source_name, st.name AS source_type,
         t.name AS type, t.strength,
         CASE t.name_kind WHEN 'index' THEN CAST(e.label AS TEXT) ELSE ls.data END AS label,
         e.dest, dn.data AS dest_name, dt.name AS dest_type
  FROM edge e JOIN edge_types t ON t.edgetypeid = e.edgetypeid
  LEFT JOIN strings ls ON t.name_kind = 'string' AND ls.stringid = e.label
  JOIN node s ON s.identifier = e.source JOIN strings sn ON sn.stringid = s.name
  JOIN node_types st ON st.nodetypeid = s.nodetypeid
  LEFT JOIN node d ON d.identifier = e.dest LEFT JOIN strings dn ON dn.stringid = d.name
  LEFT JOIN node_types dt ON dt.nodetypeid = d.nodetypeid;
`

// nodesFull is nodes_named with the analysis results. With results (for
// every node: they are all or nothing) the view joins heapx_result
// first, so that "ORDER BY retained_size DESC LIMIT 10" walks the
// heapx_result_retained index and answers at once; SQLite cannot do that
// through a LEFT JOIN, which took 2.7 s on 4M nodes. Without results the
// columns are NULL. A tool that adds or drops results recreates the view.
func nodesFull(results bool) string {
	if results {
		return `CREATE VIEW nodes_full AS
  SELECT n.identifier, n.seq, t.name AS type, t.category, s.data AS name, n.self_size,
         r.shallow_size, r.retained_size, r.dominator, r.distance
  FROM heapx_result r JOIN node n ON n.identifier = r.node_identifier
  JOIN node_types t ON t.nodetypeid = n.nodetypeid JOIN strings s ON s.stringid = n.name`
	}
	return `CREATE VIEW nodes_full AS
  SELECT n.identifier, n.seq, t.name AS type, t.category, s.data AS name, n.self_size,
         NULL AS shallow_size, NULL AS retained_size, NULL AS dominator, NULL AS distance
  FROM node n JOIN node_types t ON t.nodetypeid = n.nodetypeid JOIN strings s ON s.stringid = n.name`
}

// subtypeView is one of the seed's per-subtype tables (docs/format.md 6.4),
// made a view: its name, the category whose node types it covers (which
// node_types.table_name names), and its columns after node_identifier.
type subtypeView struct {
	name     string
	category model.Category
	cols     []string
}

var subtypeViews = []subtypeView{
	{"object", model.CatObject, []string{"constructor"}},
	{"array", model.CatArray, []string{"length"}},
	{"string_flat", model.CatString, []string{"length", "data"}},
	{"string_cons", model.CatConsString, []string{"length", "s1", "s2"}},
	{"string_sliced", model.CatSlicedString, []string{"length", "source", "offset"}},
	{"closure", model.CatClosure, []string{"metadata"}},
	{"function_metadata", model.CatFunctionInfo, []string{"name", "script_name", "position"}},
	{"regular_expression", model.CatRegExp, []string{"source", "flags"}},
	{"date", model.CatDate, []string{"timestamp"}},
	{"heap_number", model.CatHeapNumber, []string{"value"}},
	{"native", model.CatNative, []string{"address"}},
	{"oddball", model.CatOddball, []string{"name"}},
}

// tableName is node_types.table_name for a category: the subtype view
// that lists nodes of that category, "" for none.
func tableName(c model.Category) string {
	for _, v := range subtypeViews {
		if v.category == c {
			return v.name
		}
	}
	return ""
}

// v8Derived are the V8 derivations of subtype fields (docs/format.md 3.3):
// view -> column -> SQL expression over the node aliased n. edgeTo is the
// target of n's first out-edge of a V8 type with a given name.
func v8Derived() map[string]map[string]string {
	edgeTo := func(typ, label string) string {
		return `(SELECT e.dest FROM edge e JOIN edge_types et ON et.edgetypeid = e.edgetypeid
        JOIN strings es ON es.stringid = e.label
        WHERE e.source = n.identifier AND et.name = '` + typ + `' AND es.data = '` + label + `' ORDER BY e.seq LIMIT 1)`
	}
	return map[string]map[string]string{
		"string_cons":        {"s1": edgeTo("v8:internal", "first"), "s2": edgeTo("v8:internal", "second")},
		"string_sliced":      {"source": edgeTo("v8:internal", "parent")},
		"closure":            {"metadata": edgeTo("v8:internal", "shared")},
		"function_metadata":  {"name": "(SELECT data FROM strings WHERE stringid = n.name)", "script_name": edgeTo("v8:internal", "script_or_debug_info")},
		"regular_expression": {"source": "(SELECT data FROM strings WHERE stringid = n.name)"},
		"oddball": {"name": `(SELECT e.dest FROM edge e JOIN edge_types et ON et.edgetypeid = e.edgetypeid
        WHERE e.source = n.identifier AND et.name = 'v8:hidden' AND e.label = 0 ORDER BY e.seq LIMIT 1)`},
	}
}

// v8Nodes are the V8 selections of a view's nodes that are not "every
// node of the category" (docs/format.md 3.3): function metadata are the
// SharedFunctionInfos closures point at, oddballs are hidden nodes named
// "system / Oddball", dates are objects named Date.
var v8Nodes = map[string]string{
	"function_metadata": `FROM node n WHERE n.identifier IN (
    SELECT (SELECT e.dest FROM edge e JOIN edge_types et ON et.edgetypeid = e.edgetypeid
            JOIN strings es ON es.stringid = e.label
            WHERE e.source = c.identifier AND et.name = 'v8:internal' AND es.data = 'shared' ORDER BY e.seq LIMIT 1)
    FROM node c JOIN node_types ct ON ct.nodetypeid = c.nodetypeid WHERE ct.category = 'closure')`,
	"oddball": `FROM node n JOIN node_types nt ON nt.nodetypeid = n.nodetypeid
  WHERE nt.name = 'v8:hidden' AND n.name IN (SELECT stringid FROM strings WHERE data = 'system / Oddball')`,
	"date": `FROM node n JOIN node_types nt ON nt.nodetypeid = n.nodetypeid
  WHERE nt.category = 'object' AND n.name IN (SELECT stringid FROM strings WHERE data = 'Date')`,
}

// viewsSQL returns the CREATE VIEW statements for g: the common views,
// nodes_full with or without results, and the subtype views, with V8's
// derivations when g is a V8 dump and NULL columns otherwise.
func viewsSQL(g *model.Graph, results bool) []string {
	out := []string{nodesFull(results)}
	for _, s := range strings.Split(commonViews, ";") {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	v8 := isV8(g)
	derived := v8Derived()
	for _, v := range subtypeViews {
		var b strings.Builder
		b.WriteString("CREATE VIEW " + v.name + " AS\n  SELECT n.identifier AS node_identifier")
		for _, c := range v.cols {
			expr := "NULL"
			if v8 {
				if e, ok := derived[v.name][c]; ok {
					expr = e
				}
			}
			b.WriteString(",\n    " + expr + " AS " + quoteIdent(c))
		}
		from := `FROM node n JOIN node_types nt ON nt.nodetypeid = n.nodetypeid
  WHERE nt.category = '` + v.category.String() + `'`
		if v8 {
			if f, ok := v8Nodes[v.name]; ok {
				from = f
			}
		}
		b.WriteString("\n  " + from)
		out = append(out, b.String())
	}
	return out
}

// isV8 reports whether g came from a V8 snapshot (its types are in the v8
// namespace), which decides how the subtype views are derived.
func isV8(g *model.Graph) bool {
	for _, t := range g.NodeTypes {
		if t.Namespace == "v8" {
			return true
		}
	}
	return false
}
