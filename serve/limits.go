package serve

import (
	"net/http"
	"strconv"

	"github.com/heapx/heapx/internal/admit"
)

// Request classes the API bounds (admit's): a few of one class run at
// once, a bounded number wait for their turn, and the rest are answered
// 503 with a Retry-After, so many clients at once cost the server time,
// not memory.
const (
	ClassPaths      = admit.Paths      // objects/ID/paths
	ClassDominators = admit.Dominators // objects/ID/children, .../children/classes, .../flame, .../flame/objects
	ClassQueries    = admit.Queries    // queries/NAME, diff, diff/ROW/new, diff/ROW/deleted
	ClassSQL        = admit.SQL        // sql
)

// Limit is how many requests of a class run at once and how many may
// wait; MaxWait is how long one waits before it is answered 503.
type Limit = admit.Limit

// DefaultLimits are heapx serve's limits (admit.Defaults).
func DefaultLimits() map[string]Limit { return admit.Defaults() }

// gated wraps an API function so that it runs when its class's gate lets
// it; a refusal is a 503 with Retry-After.
func (h *handler) gated(class string, fn func(r *http.Request) (any, error)) func(r *http.Request) (any, error) {
	g := h.gates[class]
	if g == nil {
		return fn
	}
	return func(r *http.Request) (any, error) {
		release, err := g.Enter(r.Context())
		if err != nil {
			return nil, err
		}
		defer release()
		return fn(r)
	}
}

// writeBusy answers a refused request: 503, Retry-After, and the JSON
// error every API error is.
func (h *handler) writeBusy(w http.ResponseWriter, e *admit.BusyError) {
	w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	h.fail(w, http.StatusServiceUnavailable, e.Error())
}
