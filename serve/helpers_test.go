package serve_test

import (
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/heapx/heapx"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/serve"
	"github.com/heapx/heapx/session"
	"github.com/heapx/heapx/sqlquery"
)

// inputs caches the dumps the tests share (heapx.Open), so that each is
// read and analysed once.
var inputs sync.Map

// input opens a dump: rel is under testdata/, or a path.
func input(t testing.TB, rel string) *heapx.Dump {
	t.Helper()
	path := rel
	if !filepath.IsAbs(rel) {
		path = filepath.Join(testfixtures.Dir(), rel)
	}
	if in, ok := inputs.Load(path); ok {
		return in.(*heapx.Dump)
	}
	in, err := heapx.Open(path, heapx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	inputs.Store(path, in)
	return in
}

// open opens a session on the file and baselines (paths under
// testdata/), its SQL cache in a temporary directory.
func open(t testing.TB, file string, baselines ...string) *session.Session {
	t.Helper()
	var bs []*heapx.Dump
	for _, b := range baselines {
		bs = append(bs, input(t, b))
	}
	s, err := session.New(input(t, file), bs, session.Options{SQLCache: sqlquery.Choice{Path: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// start serves s on a loopback port, as heapx serve does, and returns
// its address.
func start(t testing.TB, s *session.Session, opt serve.Options) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	if opt.Token == "" {
		opt.Hosts = serve.LoopbackHosts(srv.Listener.Addr())
	}
	srv.Config.Handler = serve.Handler(s, opt)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}
