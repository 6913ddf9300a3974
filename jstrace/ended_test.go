package jstrace

import (
	"testing"

	"github.com/heapx/heapx/formats/memtrace"
)

// TestEnded: what heapx trace says of each way a traced program ends.
func TestEnded(t *testing.T) {
	for _, c := range []struct {
		res  Result
		want string
	}{
		{Result{Exit: &Exit{How: memtrace.ExitLoopDone}}, "exited with status 0 (its event loop ran out of work)"},
		{Result{ExitCode: 3, Exit: &Exit{Code: 3, How: memtrace.ExitProcessExit}}, "exited with status 3 (process.exit)"},
		{Result{ExitCode: 1, Exit: &Exit{Code: 1, How: memtrace.ExitUncaught, Detail: "Error: bad"}}, "exited with status 1 after an uncaught exception: Error: bad"},
		// The signal that ended it is said once, not as received too.
		{Result{ExitCode: -1, Signal: 15, Received: []string{"SIGINT", "SIGTERM"}, Exit: &Exit{How: memtrace.ExitSignal, Detail: "SIGTERM"}},
			"received SIGINT, then was ended by SIGTERM, which it had no listener for"},
		{Result{ExitCode: -1, Signal: 9}, "was killed by SIGKILL before it could say how it ended: the trace holds what it wrote until a fraction of a second before"},
		{Result{ExitCode: -1, Signal: 9, Killed: true, Received: []string{"SIGINT"}},
			"received SIGINT, then did not answer it: heapx killed it (SIGKILL); the trace holds what it wrote until a fraction of a second before"},
		{Result{ExitCode: -1, Signal: 40}, "was killed by signal 40 before it could say how it ended: the trace holds what it wrote until a fraction of a second before"},
	} {
		if got := c.res.Ended(); got != c.want {
			t.Errorf("%+v:\n got %q\nwant %q", c.res, got, c.want)
		}
	}
}
