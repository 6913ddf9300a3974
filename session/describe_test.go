package session_test

import (
	"encoding/json"
	"testing"

	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/session"
)

// TestDescribeQuery: heapx list --json, heapx serve's API and the MCP
// server describe a query with one type (query.Descriptor); the session's
// form adds "required" to each argument and "runnable", in that order,
// and the list's form has neither.
func TestDescribeQuery(t *testing.T) {
	q := query.Lookup("paths")
	list, err := json.Marshal(q.Describe())
	if err != nil {
		t.Fatal(err)
	}
	const wantList = `{"name":"paths","group":"basic","usage":"FILE --id ID","title":` +
		`"Show what keeps an object alive: its retainer paths from the roots, through the program's code","min_inputs":1,"max_inputs":1,"args":[` +
		`{"name":"limit","kind":"int","default":3,"help":"number of paths to print"},` +
		`{"name":"id","kind":"string","default":"","help":"id of the object whose retainers to show (required)"}]}`
	if string(list) != wantList {
		t.Errorf("list's descriptor:\n%s\nwant\n%s", list, wantList)
	}
	served, err := json.Marshal(session.DescribeQuery(q, 1))
	if err != nil {
		t.Fatal(err)
	}
	const wantServed = `{"name":"paths","group":"basic","usage":"FILE --id ID","title":` +
		`"Show what keeps an object alive: its retainer paths from the roots, through the program's code","min_inputs":1,"max_inputs":1,"args":[` +
		`{"name":"limit","kind":"int","default":3,"help":"number of paths to print","required":false},` +
		`{"name":"id","kind":"string","default":"","help":"id of the object whose retainers to show (required)","required":true}],"runnable":true}`
	if string(served) != wantServed {
		t.Errorf("the session's descriptor:\n%s\nwant\n%s", served, wantServed)
	}
	if leaks := session.DescribeQuery(query.Lookup("leaks"), 1); leaks.Runnable {
		t.Error("leaks is runnable on one snapshot")
	}
}
