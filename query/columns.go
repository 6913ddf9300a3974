package query

import "fmt"

// limitArg is the -n argument of the queries with a row limit.
func limitArg(def int) Arg {
	return Arg{Name: "limit", Short: "n", Kind: IntArg, Default: def, Help: "number of rows to print (0: all)"}
}

// limit checks the -n value and returns it with 0 meaning all of total.
func limit(c *Context, total int) (int, error) {
	n := c.Int("limit")
	if n < 0 {
		return 0, fmt.Errorf("-n must be 0 or more, not %d", n)
	}
	if n == 0 || n > total {
		n = total
	}
	return n, nil
}

// Column sets the basic views share.
var (
	colCount    = Column{Key: "count", Title: "Count", Kind: Count}
	colDistance = Column{Key: "distance", Title: "Distance", Kind: Distance}
	colShallow  = Column{Key: "shallow_size", Title: "Shallow size", Kind: Bytes}
	colRetained = Column{Key: "retained_size", Title: "Retained size", Kind: Bytes}
	colPercent  = Column{Key: "retained_percent", Title: "%", Kind: Percent}
	colClass    = Column{Key: "constructor", Title: "Constructor", Kind: Text}
	colObject   = Column{Key: "object", Title: "Object", Kind: Text}
)
