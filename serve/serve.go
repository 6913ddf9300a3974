// Package serve is heapx serve's web server: the JSON API under /api/v1/
// over a session.Session, and the page that uses it, plain ES modules
// and CSS embedded in the binary (no build step). Everything from a dump
// reaches the page as JSON and is written into it as text; the page loads
// nothing from elsewhere, and a strict Content-Security-Policy says so to
// the browser.
//
// The API's answers are the shapes of heapx's --json output (the session
// package's types); errors are JSON too: {"error": message, "status":
// code}, 404 for what the dump does not have, 400 for a request that is
// wrong, 503 with Retry-After when too many requests of a heavy class
// (paths, the dominator tree, queries, SQL) are running and waiting.
package serve

import (
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/heapx/heapx/internal/admit"
	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/session"
)

//go:embed static
var static embed.FS

// Options configure the server.
type Options struct {
	// Token, when not empty, must come with every request: in the
	// address once (?token=, which sets a cookie), as the cookie, or as
	// "Authorization: Bearer TOKEN". heapx serve sets one when it
	// listens on an address other machines can reach.
	Token string
	// Hosts are the Host header values requests may carry, so that a web
	// page cannot reach the server through a DNS name it rebinds to the
	// loopback address; empty allows any (with a Token).
	Hosts []string
	// ErrorLog receives the failures of heapx itself (HTTP 500); nil
	// discards them.
	ErrorLog *log.Logger
	// Limits bound the requests of each heavy class (ClassPaths,
	// ClassDominators, ClassQueries, ClassSQL) running and waiting at
	// once; nil is DefaultLimits, and a class it leaves out is not
	// bounded.
	Limits map[string]Limit
}

// tokenCookie is the cookie that carries Options.Token.
const tokenCookie = "heapx_token"

// maxBody bounds a request body (an SQL statement).
const maxBody = 64 << 10

// csp allows the page only its own scripts, styles and API: no inline
// script or style, no other origin, no plugin, no frame around it.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler returns the server's handler for s.
func Handler(s *session.Session, opt Options) http.Handler {
	limits := opt.Limits
	if limits == nil {
		limits = DefaultLimits()
	}
	h := &handler{s: s, opt: opt, mux: http.NewServeMux(), gates: admit.Gates(limits)}
	assets, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded directory exists: a build without it is a bug
	}
	files := http.FileServer(http.FS(assets))
	h.mux.Handle("GET /static/", http.StripPrefix("/static/", files))
	h.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		http.ServeFileFS(w, r, assets, "index.html")
	})
	h.api("GET", "/api/v1/session", func(r *http.Request) (any, error) { return s.Info(), nil })
	h.api("GET", "/api/v1/report", func(r *http.Request) (any, error) { return s.Report() })
	h.api("GET", "/api/v1/classes", func(r *http.Request) (any, error) {
		q, err := listQuery(r)
		if err != nil {
			return nil, err
		}
		return s.Classes(q)
	})
	h.api("GET", "/api/v1/classes/{class}/instances", func(r *http.Request) (any, error) {
		c, off, lim, err := indexAndPage(r, "class")
		if err != nil {
			return nil, err
		}
		return s.Instances(c, r.URL.Query().Get("allocated"), off, lim)
	})
	// An object's views answer about the snapshot ?snapshot=N names (0,
	// the file, unless given; 1 on, the baselines), so a deleted object
	// of the Comparison opens like any other.
	h.api("GET", "/api/v1/objects/{id}", func(r *http.Request) (any, error) {
		in, err := snapshot(s, r)
		if err != nil {
			return nil, err
		}
		return in.Object(r.PathValue("id"))
	})
	h.api("GET", "/api/v1/objects/{id}/references", objectPage(s, (*session.Session).References))
	h.api("GET", "/api/v1/objects/{id}/retainers", objectPage(s, (*session.Session).Retainers))
	h.api("GET", "/api/v1/objects/{id}/paths", h.gated(ClassPaths, func(r *http.Request) (any, error) {
		in, err := snapshot(s, r)
		if err != nil {
			return nil, err
		}
		k, err := intArg(r, "k", 3)
		if err != nil {
			return nil, err
		}
		var ignore []string
		if v := r.URL.Query().Get("ignore"); v != "" {
			ignore = strings.Split(v, ",")
		}
		noWeak, err := boolArg(r, "no_weak")
		if err != nil {
			return nil, err
		}
		return in.Paths(r.PathValue("id"), k, ignore, noWeak)
	}))
	h.api("GET", "/api/v1/objects/{id}/children", h.gated(ClassDominators, func(r *http.Request) (any, error) {
		in, off, lim, err := snapshotPage(s, r)
		if err != nil {
			return nil, err
		}
		class, err := intArg(r, "class", -1)
		if err != nil {
			return nil, err
		}
		return in.Children(r.PathValue("id"), class, off, lim)
	}))
	h.api("GET", "/api/v1/objects/{id}/children/classes", h.gated(ClassDominators, objectPage(s, (*session.Session).ChildClasses)))
	h.api("GET", "/api/v1/objects/{id}/flame", h.gated(ClassDominators, func(r *http.Request) (any, error) {
		in, err := snapshot(s, r)
		if err != nil {
			return nil, err
		}
		path, err := classPath(r)
		if err != nil {
			return nil, err
		}
		depth, err := intArg(r, "depth", 6)
		if err != nil {
			return nil, err
		}
		minShare := 0.005
		if v := r.URL.Query().Get("min"); v != "" {
			if minShare, err = strconv.ParseFloat(v, 64); err != nil {
				return nil, &session.Error{Kind: session.Invalid, Msg: "min=" + strconv.Quote(v) + " is not a number"}
			}
		}
		return in.Flame(r.PathValue("id"), path, depth, minShare)
	}))
	h.api("GET", "/api/v1/objects/{id}/flame/objects", h.gated(ClassDominators, func(r *http.Request) (any, error) {
		in, off, lim, err := snapshotPage(s, r)
		if err != nil {
			return nil, err
		}
		path, err := classPath(r)
		if err != nil {
			return nil, err
		}
		return in.FlameObjects(r.PathValue("id"), path, off, lim)
	}))
	h.api("GET", "/api/v1/diff", h.gated(ClassQueries, func(r *http.Request) (any, error) {
		q, err := listQuery(r)
		if err != nil {
			return nil, err
		}
		return s.Diff(q)
	}))
	h.api("GET", "/api/v1/diff/{row}/new", h.gated(ClassQueries, func(r *http.Request) (any, error) {
		row, off, lim, err := indexAndPage(r, "row")
		if err != nil {
			return nil, err
		}
		return s.NewObjects(row, off, lim)
	}))
	h.api("GET", "/api/v1/diff/{row}/deleted", h.gated(ClassQueries, func(r *http.Request) (any, error) {
		row, off, lim, err := indexAndPage(r, "row")
		if err != nil {
			return nil, err
		}
		return s.DeletedObjects(row, off, lim)
	}))
	h.api("GET", "/api/v1/queries/{name}", h.gated(ClassQueries, func(r *http.Request) (any, error) {
		args := map[string]string{}
		form := "json"
		for k, v := range r.URL.Query() {
			switch k {
			case "form":
				form = v[0]
			case "token":
			default:
				args[k] = v[len(v)-1]
			}
		}
		f, err := session.ParseForm(form)
		if err != nil {
			return nil, err
		}
		return s.QueryAnswer(r.PathValue("name"), args, f)
	}))
	h.api("POST", "/api/v1/sql", h.gated(ClassSQL, func(r *http.Request) (any, error) {
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			return nil, &session.Error{Kind: session.Invalid, Msg: "send the statement as JSON: {\"query\": \"SELECT ...\", \"limit\": 100} with Content-Type: application/json"}
		}
		var body struct {
			Query string `json:"query"`
			Limit int    `json:"limit"`
		}
		dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, maxBody))
		if err := dec.Decode(&body); err != nil {
			return nil, &session.Error{Kind: session.Invalid, Msg: "the request is not {\"query\": \"SELECT ...\", \"limit\": N}, or longer than 64 kB: " + err.Error()}
		}
		return s.SQL(r.Context(), body.Query, body.Limit)
	}))
	h.mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		h.fail(w, http.StatusNotFound, "no such API endpoint: "+r.URL.Path+" (see docs/web-api.md)")
	})
	return h
}

// handler is the server: security checks, then the routes.
type handler struct {
	s     *session.Session
	opt   Options
	mux   *http.ServeMux
	gates map[string]*admit.Gate // by request class
}

// api registers an API endpoint: fn's answer is written as JSON, its
// error as a JSON error with the status its kind says.
func (h *handler) api(method, pattern string, fn func(r *http.Request) (any, error)) {
	h.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method && !(method == "GET" && r.Method == "HEAD") {
			w.Header().Set("Allow", method)
			h.fail(w, http.StatusMethodNotAllowed, r.Method+" is not allowed here; use "+method)
			return
		}
		v, err := answer(fn, r)
		if err != nil {
			var busy *admit.BusyError
			switch {
			case errors.As(err, &busy):
				h.writeBusy(w, busy)
				return
			case r.Context().Err() != nil:
				return // the client is gone: nobody reads an answer
			}
			status := http.StatusInternalServerError
			switch session.KindOf(err) {
			case session.NotFound:
				status = http.StatusNotFound
			case session.Invalid:
				status = http.StatusBadRequest
			default:
				if h.opt.ErrorLog != nil {
					h.opt.ErrorLog.Printf("%s %s: %v", r.Method, r.URL.Path, err)
				}
			}
			h.fail(w, status, err.Error())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if st, ok := v.(query.JSONStreamer); ok {
			st.StreamJSON(w) // an error here is the connection's: the client is gone
			return
		}
		enc := json.NewEncoder(w)
		enc.Encode(v)
	})
}

// answer calls fn, turning a panic (a bug of heapx on some dump) into an
// error, so the page gets a JSON error and the server goes on.
func answer(fn func(r *http.Request) (any, error), r *http.Request) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error (please report it): %v", p)
		}
	}()
	return fn(r)
}

// errorJSON is the body of every API error.
type errorJSON struct {
	Error  string `json:"error"`
	Status int    `json:"status"`
}

func (h *handler) fail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(errorJSON{Error: msg, Status: status})
}

// ServeHTTP checks every request before routing it: the Host it names,
// where it comes from (no other site's page may use the API: the
// browser's Sec-Fetch-Site says where a request comes from), and the
// token.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", csp)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	if strings.HasPrefix(r.URL.Path, "/api/") {
		hd.Set("Cache-Control", "no-store")
	}
	if len(h.opt.Hosts) > 0 && !hostAllowed(r.Host, h.opt.Hosts) {
		h.fail(w, http.StatusForbidden, "this server answers only requests addressed to "+strings.Join(h.opt.Hosts, " or "))
		return
	}
	// A top-level navigation may come from anywhere (a link in a chat);
	// everything else must come from the page itself or be typed.
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" &&
		!(r.Header.Get("Sec-Fetch-Mode") == "navigate" && !strings.HasPrefix(r.URL.Path, "/api/")) {
		h.fail(w, http.StatusForbidden, "requests from other sites are refused")
		return
	}
	if h.opt.Token != "" {
		if t := r.URL.Query().Get("token"); t != "" && h.tokenOK(t) && !strings.HasPrefix(r.URL.Path, "/api/") {
			// The token in the address the terminal printed: keep it
			// in a cookie and drop it from the address, so that links
			// copied from the page do not carry it.
			http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			u := *r.URL
			q := u.Query()
			q.Del("token")
			u.RawQuery = q.Encode()
			http.Redirect(w, r, u.String(), http.StatusSeeOther)
			return
		}
		if !h.authorized(r) {
			h.fail(w, http.StatusUnauthorized, "this server needs the token it printed when it started (open the address it printed, with ?token=)")
			return
		}
	}
	h.mux.ServeHTTP(w, r)
}

func (h *handler) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(h.opt.Token)) == 1
}

func (h *handler) authorized(r *http.Request) bool {
	if c, err := r.Cookie(tokenCookie); err == nil && h.tokenOK(c.Value) {
		return true
	}
	if a, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && h.tokenOK(a) {
		return true
	}
	return h.tokenOK(r.URL.Query().Get("token"))
}

// hostAllowed reports whether the Host header host is one of hosts.
func hostAllowed(host string, hosts []string) bool {
	for _, h := range hosts {
		if strings.EqualFold(host, h) {
			return true
		}
	}
	return false
}

// LoopbackHosts are the Host header values a browser on this machine
// sends to a server listening on the loopback address addr (a
// net.Listener's): its IP address and "localhost", with the port.
func LoopbackHosts(addr net.Addr) []string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return nil
	}
	port := strconv.Itoa(tcp.Port)
	return []string{net.JoinHostPort(tcp.IP.String(), port), net.JoinHostPort("localhost", port)}
}

// pageArgs reads the offset and limit of a page.
func pageArgs(r *http.Request) (offset, limit int, err error) {
	if offset, err = intArg(r, "offset", 0); err != nil {
		return 0, 0, err
	}
	limit, err = intArg(r, "limit", 0)
	return offset, limit, err
}

// indexAndPage reads the index in path segment name and a page.
func indexAndPage(r *http.Request, name string) (index, offset, limit int, err error) {
	index, err = strconv.Atoi(r.PathValue(name))
	if err != nil {
		return 0, 0, 0, &session.Error{Kind: session.NotFound, Msg: name + " " + strconv.Quote(r.PathValue(name)) + " is not an index"}
	}
	offset, limit, err = pageArgs(r)
	return index, offset, limit, err
}

// classPath reads ?path=, the class indices from an object down to a box
// of its flame graph ("3,17"; none: the object's own box).
func classPath(r *http.Request) ([]int32, error) {
	v := r.URL.Query().Get("path")
	if v == "" {
		return nil, nil
	}
	parts := strings.Split(v, ",")
	path := make([]int32, len(parts))
	for i, p := range parts {
		c, err := strconv.ParseInt(p, 10, 32)
		if err != nil {
			return nil, &session.Error{Kind: session.Invalid, Msg: "path=" + strconv.Quote(v) + " is not class indices separated by commas"}
		}
		path[i] = int32(c)
	}
	return path, nil
}

// intArg reads the integer query parameter name, def when absent.
func intArg(r *http.Request, name string, def int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, &session.Error{Kind: session.Invalid, Msg: name + "=" + strconv.Quote(v) + " is not an integer"}
	}
	return n, nil
}

// boolArg reads the query parameter name, "true"/"1" or "false"/"0";
// false when absent.
func boolArg(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, &session.Error{Kind: session.Invalid, Msg: name + "=" + strconv.Quote(v) + " is not true or false"}
	}
	return b, nil
}

// snapshot returns the session on the snapshot the request's ?snapshot=
// names (session.Session.Snapshot), the file's when it names none.
func snapshot(s *session.Session, r *http.Request) (*session.Session, error) {
	i, err := intArg(r, "snapshot", 0)
	if err != nil {
		return nil, err
	}
	return s.Snapshot(i)
}

// objectPage answers with page's page of the edges or children of the
// object the path's {id} names, in the snapshot ?snapshot= names, at
// ?offset= and ?limit=.
func objectPage[P any](s *session.Session, page func(in *session.Session, id string, offset, limit int) (P, error)) func(r *http.Request) (any, error) {
	return func(r *http.Request) (any, error) {
		in, off, lim, err := snapshotPage(s, r)
		if err != nil {
			return nil, err
		}
		return page(in, r.PathValue("id"), off, lim)
	}
}

// snapshotPage reads what a page of an object's view takes: the
// snapshot ?snapshot= names, ?offset= and ?limit=.
func snapshotPage(s *session.Session, r *http.Request) (in *session.Session, offset, limit int, err error) {
	if in, err = snapshot(s, r); err != nil {
		return nil, 0, 0, err
	}
	offset, limit, err = pageArgs(r)
	return in, offset, limit, err
}

// listQuery reads a list's filter, sort column, order and page.
func listQuery(r *http.Request) (session.ListQuery, error) {
	q := r.URL.Query()
	off, lim, err := pageArgs(r)
	if err != nil {
		return session.ListQuery{}, err
	}
	lq := session.ListQuery{Filter: q.Get("filter"), Sort: q.Get("sort"), Offset: off, Limit: lim, Allocated: q.Get("allocated")}
	switch q.Get("order") {
	case "", "desc":
		lq.Desc = true
	case "asc":
	default:
		return lq, &session.Error{Kind: session.Invalid, Msg: `order must be "asc" or "desc"`}
	}
	return lq, nil
}
