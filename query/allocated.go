package query

import (
	"errors"
	"fmt"

	"github.com/heapx/heapx/analysis/leak"
)

// AllocatedFilter is the filter of summary --between, --before and
// --after: DevTools' Summary filter "Objects allocated between Snapshot 1
// and Snapshot 2" (and "before Snapshot 1"), over snapshots of one V8
// process taken in one inspector session.
type AllocatedFilter struct {
	// Filter is "between", "before" or "after"; Title says it as
	// DevTools' menu does, with the files' names.
	Filter, Title string
	// Snapshots are the paths whose newest ids bound Range.
	Snapshots []string
	Range     leak.IDRange
}

// NewAllocatedFilter checks that snaps, oldest first, are V8 snapshots of
// one process taken in one session (leak.PairCheck.MatchesObjects), in
// the order given, and returns the filter named by filter over them:
// "between" the first two, "before" or "after" the first. DevTools
// decides it the same way: the bounds are the snapshots' newest heap
// object ids (maxJSObjectId), "after" the first up to the last's.
func NewAllocatedFilter(filter string, snaps []Snapshot) (*AllocatedFilter, error) {
	flag := "summary --" + filter
	newest, paths, names, err := allocationBounds(flag, snaps, SeriesRules{Expected: "the snapshots oldest first",
		Command: func(p []string) string { return commandLine(flag, p) }})
	if err != nil {
		return nil, err
	}
	switch filter {
	case "between":
		return between(newest, paths, names, 0), nil
	case "before":
		return &AllocatedFilter{Filter: filter, Title: "Objects allocated before " + names[0], Snapshots: paths[:1],
			Range: leak.IDRange{Through: newest[0]}}, nil
	case "after":
		return &AllocatedFilter{Filter: filter, Title: "Objects allocated after " + names[0], Snapshots: paths[:1],
			Range: leak.IDRange{After: newest[0], Through: newest[len(newest)-1]}}, nil
	}
	return nil, fmt.Errorf("no filter %q: between, before or after", filter)
}

// AllocatedFilters returns the filters DevTools' Summary offers for the
// newest of snaps (oldest first): "Objects allocated before" the first
// snapshot, then "between" each snapshot and the next, so that the last
// is what the newest added. The error says why there are none (not V8
// snapshots of one process taken in one session, in order); rules say how
// the front end takes the snapshots, for its messages.
func AllocatedFilters(snaps []Snapshot, rules SeriesRules) ([]AllocatedFilter, error) {
	newest, paths, names, err := allocationBounds("Filtering objects by when they were allocated", snaps, rules)
	if err != nil {
		return nil, err
	}
	out := []AllocatedFilter{{Filter: "before", Title: "Objects allocated before " + names[0], Snapshots: paths[:1],
		Range: leak.IDRange{Through: newest[0]}}}
	for i := 0; i+1 < len(snaps); i++ {
		out = append(out, *between(newest, paths, names, i))
	}
	return out, nil
}

// between is the filter of the objects allocated between snapshot i and
// i+1.
func between(newest []uint64, paths, names []string, i int) *AllocatedFilter {
	return &AllocatedFilter{Filter: "between", Title: fmt.Sprintf("Objects allocated between %s and %s", names[i], names[i+1]),
		Snapshots: paths[i : i+2], Range: leak.IDRange{After: newest[i], Through: newest[i+1]}}
}

// allocationBounds checks snaps for what, as NewAllocatedFilter says
// (CheckSeries with rules), and returns their newest heap-object ids,
// paths and names.
func allocationBounds(what string, snaps []Snapshot, rules SeriesRules) (newest []uint64, paths, names []string, err error) {
	paths = snapshotPaths(snaps)
	names = fileNames(paths)
	ws, err := CheckSeries(snaps, rules)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(ws) > 0 {
		return nil, nil, nil, fmt.Errorf("%s needs V8 snapshots of one process taken in one inspector session, oldest first, as their ids tell: %s", what, ws[0].Message)
	}
	newest = make([]uint64, len(snaps))
	for i, sn := range snaps {
		if sn.Digest != nil {
			newest[i] = sn.Digest.NewestID()
		} else {
			newest[i] = leak.NewestID(sn.Analysis.Graph)
		}
		if newest[i] == 0 {
			return nil, nil, nil, fmt.Errorf("%s needs V8 snapshots (Node.js, Chrome): the ids of %s are not numbers V8 gives objects in the order it meets them, so they do not tell when an object was allocated", what, names[i])
		}
	}
	return newest, paths, names, nil
}

// allocatedFilter reads summary's --between, --before and --after and
// the number of snapshots each takes; nil without any.
func allocatedFilter(c *Context) (*AllocatedFilter, error) {
	var filter string
	for _, name := range []string{"between", "before", "after"} {
		if !c.Bool(name) {
			continue
		}
		if filter != "" {
			return nil, errors.New("--between, --before and --after cannot be used together")
		}
		filter = name
	}
	n := len(c.Snapshots)
	switch {
	case filter == "" && n != 1:
		return nil, fmt.Errorf("summary takes one FILE, got %d (with --between A B [FILE], --before A FILE or --after A FILE, more)", n)
	case filter == "":
		return nil, nil
	case filter == "between" && n < 2:
		return nil, errors.New("--between needs the snapshots A B [FILE], oldest first: the objects allocated between A and B, as they are in FILE (B without FILE)")
	case filter != "between" && n != 2:
		return nil, fmt.Errorf("--%s needs the snapshots A FILE, oldest first: the objects of FILE allocated %s A", filter, filter)
	}
	return NewAllocatedFilter(filter, c.Snapshots)
}

// snapshotPaths returns the snapshots' paths.
func snapshotPaths(snaps []Snapshot) []string {
	out := make([]string, len(snaps))
	for i, sn := range snaps {
		out[i] = sn.Path
	}
	return out
}
