package mcpserver

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/heapx/heapx/internal/admit"
	"github.com/heapx/heapx/report"
	"github.com/heapx/heapx/session"
)

// Target names the dump a call asks about.
type Target struct {
	Dump string `json:"dump,omitempty" jsonschema:"the dump to ask about: the id open returned (\"d1\") or its file's path; default: the dump opened last"`
}

// ObjectRef names an object of a dump.
type ObjectRef struct {
	Target
	ID string `json:"id" jsonschema:"the object's id: \"12345\" or \"@12345\" (V8), \"0x7f3a10\" (Java, Firefox: addresses; the decimal number answers show works too), or \"root\""`
}

// Page selects a page of a list. A Cursor carries the whole request it
// came from (the list, its filter and order, the next offset), so the
// agent passes it alone.
type Page struct {
	Offset int    `json:"offset,omitempty" jsonschema:"the first row to return, counted from 0 (default 0)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"rows per page: default 25, at most 1000"`
	Cursor string `json:"cursor,omitempty" jsonschema:"the next_cursor of an earlier answer, for the next page of the same list; when given, the other arguments are taken from it"`
}

// DefaultPage is the rows of a page when the agent does not say: fewer
// than the web view's (session.DefaultPage), since every row is read into
// the agent's context; the agent asks for more when it needs them.
const DefaultPage = 25

// rows is the page's row limit.
func (p *Page) rows() int {
	if p.Limit == 0 {
		return DefaultPage
	}
	return p.Limit
}

// resume replaces the request in (a pointer to the struct that embeds
// p) with the one p's cursor carries.
func (p *Page) resume(in any) error {
	if p.Cursor == "" {
		return nil
	}
	b, err := base64.RawURLEncoding.DecodeString(p.Cursor)
	if err == nil {
		err = json.Unmarshal(b, in)
	}
	if err != nil {
		return &session.Error{Kind: session.Invalid, Msg: "the cursor is not one this server gave: pass an answer's next_cursor unchanged"}
	}
	return nil
}

// next returns the cursor of the page after rows [offset, end) of total
// for the request in (a pointer to the struct that embeds p), "" after
// the last page.
func (p *Page) next(in any, end, total int) string {
	if end >= total {
		return ""
	}
	saved := *p
	p.Offset, p.Cursor = end, ""
	b, err := json.Marshal(in)
	*p = saved
	if err != nil {
		panic(err) // the request was decoded from JSON
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// Answers that are a page of a list: serve's shapes with the cursor of
// the next page (absent after the last).
type (
	classPage struct {
		*session.ClassPage
		NextCursor string `json:"next_cursor,omitempty"`
	}
	instancePage struct {
		*session.InstancePage
		NextCursor string `json:"next_cursor,omitempty"`
	}
	edgePage struct {
		*session.EdgePage
		NextCursor string `json:"next_cursor,omitempty"`
	}
	diffPage struct {
		*session.DiffPage
		NextCursor string `json:"next_cursor,omitempty"`
	}
	newObjectPage struct {
		*session.NewObjectPage
		NextCursor string `json:"next_cursor,omitempty"`
	}
)

// Inputs of the tools.
type (
	openIn struct {
		File      string   `json:"file" jsonschema:"path of the heap dump to explore (the newest snapshot of a series); .heapsnapshot, .heaptimeline, .fxsnapshot, .hprof, .jsonl, .db, plain or .gz, a Parquet partition (dump=<id>), or a Node.js core"`
		Baselines []string `json:"baselines,omitempty" jsonschema:"earlier snapshots of the same program, oldest first, for leaks, diff and growth"`
		Binary    string   `json:"binary,omitempty" jsonschema:"for a Node.js core dump: the node executable its process ran (default: the server's --binary, else the path the core names)"`
	}
	overviewIn struct {
		Target
		Parts []string `json:"parts,omitempty" jsonschema:"the keys of the report's parts to return (as an answer's parts[].key says); default: all"`
	}
	summaryIn struct {
		Target
		Filter    string `json:"filter,omitempty" jsonschema:"only classes whose name contains this, ignoring case"`
		Sort      string `json:"sort,omitempty" jsonschema:"retained_size (default), shallow_size, count, distance or constructor"`
		Desc      bool   `json:"desc,omitempty" jsonschema:"sort descending (retained_size is descending by default)"`
		Allocated string `json:"allocated,omitempty" jsonschema:"only objects allocated between two snapshots of the series: a key of open's allocation_filters (\"between:2:0\" with two baselines: between the newer baseline and the file)"`
		Page
	}
	instancesIn struct {
		Target
		Class     *int   `json:"class,omitempty" jsonschema:"the class's index, as summary's classes[].index says (required without a cursor)"`
		Allocated string `json:"allocated,omitempty" jsonschema:"only instances allocated between two snapshots: a key of open's allocation_filters, as for summary"`
		Page
	}
	edgesIn struct {
		Target
		ID string `json:"id,omitempty" jsonschema:"the object's id, as for inspect (required without a cursor)"`
		Page
	}
	pathsIn struct {
		ObjectRef
		K      int      `json:"k,omitempty" jsonschema:"how many paths, 1 to 20 (default 3)"`
		Ignore []string `json:"ignore,omitempty" jsonschema:"ids of objects the paths must not go through (DevTools' ignore this retainer)"`
		NoWeak bool     `json:"no_weak,omitempty" jsonschema:"as MAT's path to GC roots excluding weak/soft references: no weak or WeakMap (ephemeron) references, and none through the runtime's own objects (Node's and the engine's) where the object has such paths; through_runtime in the answer says it has none"`
	}
	topIn struct {
		Target
		Limit int `json:"limit,omitempty" jsonschema:"how many objects (default 20, at most 1000)"`
	}
	suspectsIn struct {
		Target
		Limit     int     `json:"limit,omitempty" jsonschema:"how many suspects (default 10, at most 1000)"`
		Threshold float64 `json:"threshold,omitempty" jsonschema:"minimum share of the heap a suspect retains, in percent (default 10)"`
	}
	leaksIn struct {
		Target
		Limit       int    `json:"limit,omitempty" jsonschema:"how many leak clusters (default 10, at most 1000)"`
		MinRetained string `json:"min_retained,omitempty" jsonschema:"ignore leaked objects retaining no more than this size (\"10kB\", \"1MB\", bytes)"`
		Internals   bool   `json:"internals,omitempty" jsonschema:"also report leaks of the engine's own objects"`
	}
	diffIn struct {
		Target
		Filter string `json:"filter,omitempty" jsonschema:"only classes whose name contains this, ignoring case"`
		Sort   string `json:"sort,omitempty" jsonschema:"a column: new, deleted, delta, alloc_size, freed_size, size_delta, base_count, target_count or constructor; default DevTools' order"`
		Desc   bool   `json:"desc,omitempty" jsonschema:"sort descending"`
		Page
	}
	newObjectsIn struct {
		Target
		Row *int `json:"row,omitempty" jsonschema:"the comparison's row, as diff's classes[].index says (required without a cursor)"`
		Page
	}
	sqlIn struct {
		Target
		Query string `json:"query" jsonschema:"one read-only SQLite statement over the dump's tables (nodes, edges, nodes_named, ...; heapx sql's schema)"`
		Limit int    `json:"limit,omitempty" jsonschema:"at most this many rows (default and most 1000)"`
	}
	flameIn struct {
		Target
		ID    string  `json:"id,omitempty" jsonschema:"the object the flame graph starts from, as for inspect (default: root)"`
		Path  []int32 `json:"path,omitempty" jsonschema:"class indices from that object down to the box to show, as an answer's boxes' path says (default: the object's own box)"`
		Depth int     `json:"depth,omitempty" jsonschema:"levels of boxes under it, 1 to 12 (default 4)"`
		Min   float64 `json:"min,omitempty" jsonschema:"leave out boxes retaining less than this share of the box shown, 0.001 to 1 (default 0.02)"`
	}
	queryIn struct {
		Target
		Name string         `json:"name" jsonschema:"the query's name, as the queries tool lists them (duplicates, closures, dominators, merged-paths, growth, ...)"`
		Args map[string]any `json:"args,omitempty" jsonschema:"the query's arguments by name, as the queries tool lists them (its flags without dashes): {\"limit\": 10, \"class\": \"Foo\"}"`
		// Form is "json" or "generic".
		Form string `json:"form,omitempty" jsonschema:"json (default): the shape heapx NAME --json prints; generic: sections of tables and trees with typed columns"`
	}
)

// toolClass is the admit class of the tools whose calls cost seconds or
// hundreds of MB: those run a few at a time (Options.Limits).
var toolClass = map[string]string{
	"open": admit.Open, "paths": admit.Paths, "sql": admit.SQL, "flame": admit.Dominators,
	"suspects": admit.Queries, "leaks": admit.Queries, "diff": admit.Queries,
	"new_objects": admit.Queries, "query": admit.Queries,
}

// tool adds a tool whose answer is run's, as JSON; run's error is the
// tool's error, which the agent reads, and so is a failure of heapx
// itself, which leaves the server running, and a call refused because
// too many of its class are running and waiting.
func tool[In any](s *Server, name, title, desc string, run func(ctx context.Context, in *In) (any, error)) {
	t := &mcp.Tool{Name: name, Title: title, Description: desc, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}}
	gate := s.gates[toolClass[name]]
	mcp.AddTool(s.mcp, t, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (_ *mcp.CallToolResult, out any, err error) {
		if gate != nil {
			release, err := gate.Enter(ctx)
			if err != nil {
				return nil, nil, err
			}
			defer release()
		}
		defer func() {
			if r := recover(); r != nil {
				fmt.Fprintf(s.opt.Log, "heapx: %s failed: %v\n%s", name, r, debug.Stack())
				out, err = nil, fmt.Errorf("heapx failed to answer %s (a bug; the server goes on): %v", name, r)
			}
		}()
		out, err = run(ctx, &in)
		if err != nil {
			return nil, nil, err
		}
		return nil, out, nil
	})
}

// edges answers the references or retainers tool (name) with a page of
// the edges page gives, resuming a cursor.
func (s *Server) edges(name string, page func(ss *session.Session, ref string, offset, limit int) (*session.EdgePage, error)) func(context.Context, *edgesIn) (any, error) {
	return func(ctx context.Context, in *edgesIn) (any, error) {
		if err := in.resume(in); err != nil {
			return nil, err
		}
		ss, err := s.session(in.Dump)
		if err != nil {
			return nil, err
		}
		if in.ID == "" {
			return nil, missing(name, "id", "an object's id")
		}
		p, err := page(ss, in.ID, in.Offset, in.rows())
		if err != nil {
			return nil, err
		}
		return edgePage{p, in.next(in, p.Offset+len(p.Edges), p.Total)}, nil
	}
}

// missing is the error of a paged tool called with neither an argument
// it needs nor a cursor.
func missing(tool, arg, what string) error {
	return &session.Error{Kind: session.Invalid, Msg: fmt.Sprintf("%s needs %s (%s), or the cursor of an earlier answer", tool, arg, what)}
}

// queryArgs are a query's arguments as text, as session.Query takes
// them, with the zero values of a tool's optional fields left out (the
// query's defaults).
type queryArgs map[string]string

func (a queryArgs) int(name string, v int) {
	if v != 0 {
		a[name] = strconv.Itoa(v)
	}
}

// runQuery runs the registry's query name on the dump and returns its
// answer in form (session.Session.QueryAnswer).
func (s *Server) runQuery(ref, name string, args map[string]string, form session.Form) (any, error) {
	ss, err := s.session(ref)
	if err != nil {
		return nil, err
	}
	return ss.QueryAnswer(name, args, form)
}

// argText writes a JSON argument value as the command line would.
func argText(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case bool:
		return strconv.FormatBool(v), nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	}
	return "", fmt.Errorf("is %T; give a string, number or boolean", v)
}

// openAnswer is what open says: the dump's id and serve's session info,
// with the queries named only (the queries tool describes them).
type openAnswer struct {
	Dump string `json:"dump"`
	*session.InfoJSON
	Queries []string `json:"queries"`
}

func (s *Server) addTools() {
	tool(s, "open", "Open a heap dump",
		"Read and analyse a heap dump (V8 .heapsnapshot/.heaptimeline, Firefox .fxsnapshot, Java .hprof, heapx .jsonl/.db, "+
			"plain or gzip; a Parquet partition directory dump=<id> written by heapx export; a Node.js core dump, read with "+
			"the node executable its process ran: binary), with earlier snapshots of the same program as baselines for leaks and diff, or a memory trace "+
			"written by heapx trace (its lifetime queries: lifetimes, trace-leaks, access-paths...; overview is its report). Takes seconds to minutes "+
			"for a large dump; it is kept open, and opening it again returns at once. Answers the dump's id (pass it as \"dump\"; "+
			"calls without one ask about the dump opened last), its runtime, how its ids are written, node count, total size "+
			"in bytes, each snapshot as heapx info --json describes it (inputs[].info), its objects by category (counts, shallow bytes), warnings about the series, the names of the queries, "+
			"and with baselines of one V8 process its allocation_filters (summary's allocated).",
		func(ctx context.Context, in *openIn) (any, error) {
			d, err := s.open(in.File, in.Baselines, in.Binary)
			if err != nil {
				return nil, err
			}
			return s.openAnswer(d), nil
		})
	tool(s, "dumps", "List the open dumps",
		"The dumps open now: id, file, baselines, runtime, node count and total size in bytes.",
		func(ctx context.Context, in *struct{}) (any, error) {
			s.mu.Lock()
			var ds []*dump
			for _, d := range s.dumps {
				if d.ready {
					ds = append(ds, d)
				}
			}
			s.mu.Unlock()
			out := []*DumpJSON{}
			for _, d := range ds {
				out = append(out, d.describe())
			}
			return map[string]any{"dumps": out}, nil
		})
	tool(s, "close", "Close a dump",
		"Forget an open dump and free its memory; answers the dump closed.",
		func(ctx context.Context, in *Target) (any, error) { return s.close(in.Dump) })
	tool(s, "overview", "The report: what holds the memory and what leaks",
		"heapx report --json of the dump: totals (bytes), then parts: the largest classes and objects by retained size, "+
			"leak suspects with their paths, and for a series the leaks (objects new in the target and still alive in the "+
			"final snapshot, clustered by retainer path) and growth. Sizes in bytes. About 30 kB; parts selects some.",
		func(ctx context.Context, in *overviewIn) (any, error) {
			ss, err := s.session(in.Dump)
			if err != nil {
				return nil, err
			}
			doc, err := ss.Report()
			if err != nil || len(in.Parts) == 0 {
				return doc, err
			}
			out := *doc
			out.Parts = []report.DocPart{}
			var keys []string
			for _, p := range doc.Parts {
				keys = append(keys, p.Key)
				for _, k := range in.Parts {
					if p.Key == k {
						out.Parts = append(out.Parts, p)
					}
				}
			}
			if len(out.Parts) == 0 {
				return nil, &session.Error{Kind: session.NotFound, Msg: fmt.Sprintf("the report has no part %s; its parts are %s", strings.Join(in.Parts, ", "), strings.Join(keys, ", "))}
			}
			return &out, nil
		})
	tool(s, "summary", "Classes by retained size (DevTools' Summary)",
		"A page of the dump's classes (constructors for V8): count of instances, shallow_size and retained_size in bytes "+
			"(retained: what would be freed with them), distance from the roots; filter by name, sort by a column; "+
			"allocated counts only the objects allocated between two snapshots of the series (DevTools' \"Objects allocated "+
			"between Snapshot 1 and Snapshot 2\"). classes[].index names a class for instances.",
		func(ctx context.Context, in *summaryIn) (any, error) {
			if err := in.resume(in); err != nil {
				return nil, err
			}
			ss, err := s.session(in.Dump)
			if err != nil {
				return nil, err
			}
			p, err := ss.Classes(session.ListQuery{Filter: in.Filter, Sort: in.Sort, Desc: in.Desc, Offset: in.Offset, Limit: in.rows(), Allocated: in.Allocated})
			if err != nil {
				return nil, err
			}
			return classPage{p, in.next(in, p.Offset+len(p.Classes), p.Matched)}, nil
		})
	tool(s, "instances", "A class's instances, largest first",
		"A page of the instances of one class (its index from summary), largest retained size first: id, name, "+
			"shallow_size and retained_size in bytes, distance, dominator_id.",
		func(ctx context.Context, in *instancesIn) (any, error) {
			if err := in.resume(in); err != nil {
				return nil, err
			}
			ss, err := s.session(in.Dump)
			if err != nil {
				return nil, err
			}
			if in.Class == nil {
				return nil, missing("instances", "class", "summary's classes[].index")
			}
			p, err := ss.Instances(*in.Class, in.Allocated, in.Offset, in.rows())
			if err != nil {
				return nil, err
			}
			return instancePage{p, in.next(in, p.Offset+len(p.Objects), p.Total)}, nil
		})
	tool(s, "top", "The objects that retain the most",
		"heapx top --json: the objects with the largest retained sizes (bytes), with their type, name, class, distance "+
			"and immediate dominator.",
		func(ctx context.Context, in *topIn) (any, error) {
			args := queryArgs{}
			args.int("limit", in.Limit)
			return s.runQuery(in.Dump, "top", args, session.FormJSON)
		})
	tool(s, "inspect", "One object: class, sizes, dominators",
		"An object by id: its type, name, class (with the class's Summary row), shallow and retained size in bytes, "+
			"distance, category, its dominators up to the root (the immediate one first), and how many references, "+
			"retainers and dominator-tree children it has (see references, retainers, paths).",
		func(ctx context.Context, in *ObjectRef) (any, error) {
			ss, err := s.session(in.Dump)
			if err != nil {
				return nil, err
			}
			return ss.Object(in.ID)
		})
	tool(s, "references", "What an object references (its fields)",
		"A page of an object's outgoing edges (DevTools' Containment), in the dump's order: edge type and name, "+
			"strength, and the object each leads to with its sizes in bytes.",
		s.edges("references", (*session.Session).References))
	tool(s, "retainers", "What references an object",
		"A page of the edges to an object (DevTools' Retainers), nearest to a root first, weak ones included and marked "+
			"by their strength: edge type and name, and the retaining object with its sizes in bytes.",
		s.edges("retainers", (*session.Session).Retainers))
	tool(s, "paths", "What keeps an object alive: retainer paths from the roots, through the program's code",
		"heapx paths --json: up to k retainer paths from a GC root to an object, the program's references first (among "+
			"paths at most 3 hops longer than the shortest, the fewest through the runtime's machinery), each a list of steps (edge "+
			"type, edge name such as .bus or [3], the object reached with its sizes in bytes); ignore leaves objects out. "+
			"A very long path keeps its ends and says how many hops it leaves out (elided).",
		func(ctx context.Context, in *pathsIn) (any, error) {
			ss, err := s.session(in.Dump)
			if err != nil {
				return nil, err
			}
			if in.K == 0 {
				in.K = 3
			}
			return ss.Paths(in.ID, in.K, in.Ignore, in.NoWeak)
		})
	tool(s, "flame", "Where the memory is: the flame graph of retained size",
		"The dominator tree grouped by class along the path (Perfetto's heap graph flame graph): under each box, the "+
			"objects its objects dominate directly, grouped by class, with their count and retained bytes, widest first; "+
			"more says a box has smaller or deeper boxes not sent, which a call with its path returns. Boxes are bounded "+
			"by depth and by min, so an answer stays small on any dump.",
		func(ctx context.Context, in *flameIn) (any, error) {
			ss, err := s.session(in.Dump)
			if err != nil {
				return nil, err
			}
			if in.ID == "" {
				in.ID = session.RootRef
			}
			if in.Depth == 0 {
				in.Depth = 4
			}
			if in.Min == 0 {
				in.Min = 0.02
			}
			return ss.Flame(in.ID, in.Path, in.Depth, in.Min)
		})
	tool(s, "suspects", "Leak suspects (Eclipse MAT)",
		"heapx suspects --json: where a large share of the heap accumulates (retained bytes and percent), in which "+
			"class, held by which fields, with the path to the holder.",
		func(ctx context.Context, in *suspectsIn) (any, error) {
			args := queryArgs{}
			args.int("limit", in.Limit)
			if in.Threshold != 0 {
				args["threshold"] = strconv.FormatFloat(in.Threshold, 'f', -1, 64)
			}
			return s.runQuery(in.Dump, "suspects", args, session.FormJSON)
		})
	tool(s, "leaks", "Leaks of a series (memlab)",
		"heapx leaks --json on the dump's series (open it with two baselines: the first, the one before the action, "+
			"and the dump after it): objects allocated between the baselines and still alive in the dump, clustered by "+
			"retainer path, with counts and retained bytes.",
		func(ctx context.Context, in *leaksIn) (any, error) {
			args := queryArgs{}
			args.int("limit", in.Limit)
			if in.MinRetained != "" {
				args["min-retained"] = in.MinRetained
			}
			if in.Internals {
				args["internals"] = "true"
			}
			return s.runQuery(in.Dump, "leaks", args, session.FormJSON)
		})
	tool(s, "diff", "Comparison with the baseline (DevTools' Comparison)",
		"A page of the classes that changed between the last baseline and the dump: new, deleted and delta counts, "+
			"alloc_size, freed_size and size_delta in bytes; objects matched by id where the runtime allows (matching "+
			"says). classes[].index names a row for new_objects.",
		func(ctx context.Context, in *diffIn) (any, error) {
			if err := in.resume(in); err != nil {
				return nil, err
			}
			ss, err := s.session(in.Dump)
			if err != nil {
				return nil, err
			}
			p, err := ss.Diff(session.ListQuery{Filter: in.Filter, Sort: in.Sort, Desc: in.Desc, Offset: in.Offset, Limit: in.rows()})
			if err != nil {
				return nil, err
			}
			return diffPage{p, in.next(in, p.Offset+len(p.Classes), p.Matched)}, nil
		})
	tool(s, "new_objects", "A class's objects new since the baseline",
		"A page of the objects of one comparison row (its index from diff) that are not in the baseline, largest "+
			"retained size (bytes) first.",
		func(ctx context.Context, in *newObjectsIn) (any, error) {
			if err := in.resume(in); err != nil {
				return nil, err
			}
			ss, err := s.session(in.Dump)
			if err != nil {
				return nil, err
			}
			if in.Row == nil {
				return nil, missing("new_objects", "row", "diff's classes[].index")
			}
			p, err := ss.NewObjects(*in.Row, in.Offset, in.rows())
			if err != nil {
				return nil, err
			}
			return newObjectPage{p, in.next(in, p.Offset+len(p.Objects), p.Total)}, nil
		})
	tool(s, "sql", "SQL over the dump (read-only)",
		"Run one read-only SQLite statement over the dump's SQLite form (heapx sql's tables: nodes, edges, "+
			"nodes_named, ...; sizes in bytes), made on first use. Answers the columns and up to limit rows as objects; "+
			"truncated says there were more.",
		func(ctx context.Context, in *sqlIn) (any, error) {
			ss, err := s.session(in.Dump)
			if err != nil {
				return nil, err
			}
			return ss.SQL(ctx, in.Query, in.Limit)
		})
	tool(s, "queries", "List the analyses",
		"Every analysis of heapx's registry (heapx list --json's descriptors): name, title, the snapshots it takes, its "+
			"arguments with kind, default and whether required, and whether the dump has the snapshots it needs (runnable). "+
			"Run one with the query tool.",
		func(ctx context.Context, in *Target) (any, error) {
			ss, err := s.session(in.Dump)
			if err != nil {
				return nil, err
			}
			return map[string]any{"queries": ss.Info().Queries}, nil
		})
	tool(s, "query", "Run any analysis by name",
		"Run a query of heapx's registry (see queries) on the dump with its arguments, and answer what heapx NAME --json "+
			"prints (or its generic form: sections of tables with typed columns; sizes in bytes). Row limits are at most 1000.",
		func(ctx context.Context, in *queryIn) (any, error) {
			form, err := session.ParseForm(cmp.Or(in.Form, "json"))
			if err != nil {
				return nil, err
			}
			args := map[string]string{}
			for k, v := range in.Args {
				t, err := argText(v)
				if err != nil {
					return nil, &session.Error{Kind: session.Invalid, Msg: fmt.Sprintf("%s: argument %s %v", in.Name, k, err)}
				}
				args[k] = t
			}
			return s.runQuery(in.Dump, in.Name, args, form)
		})
}

// openAnswer is open's answer for d.
func (s *Server) openAnswer(d *dump) openAnswer {
	info := d.s.Info()
	a := openAnswer{Dump: d.id, InfoJSON: info, Queries: []string{}}
	for _, q := range info.Queries {
		a.Queries = append(a.Queries, q.Name)
	}
	return a
}
