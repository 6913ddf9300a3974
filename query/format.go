package query

import (
	"fmt"
	"math"
	"strconv"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/leak"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/model"
)

// DistanceText formats a distance as DevTools' grids do (toUIDistance):
// the number for objects reachable from a user root, a dash for
// system-only and unreachable ones.
func DistanceText(d int32) string {
	if d < 0 || d >= analysis.BaseSystemDistance {
		return "-"
	}
	return strconv.Itoa(int(d))
}

// FormatValue formats one value of a column of kind k for people, as
// every front end shows it.
func FormatValue(k Kind, v any) string {
	if v == nil {
		return "" // a cell with no value, such as the sizes of elided path hops
	}
	if f, ok := v.(float64); ok {
		if s, ok := floatText(k, f); ok {
			return s
		}
	}
	switch k {
	case Count:
		if n, ok := asInt64(v); ok && n >= 0 {
			return humanize.Thousands(uint64(n))
		}
	case Bytes:
		if n, ok := asInt64(v); ok && n >= 0 {
			return humanize.Size(uint64(n))
		}
	case Percent:
		if f, ok := v.(float64); ok {
			return strconv.FormatFloat(f, 'f', 1, 64) + "%"
		}
	case ID:
		if s, ok := idText(v); ok {
			return s
		}
	case Distance:
		if n, ok := asInt64(v); ok {
			return DistanceText(int32(n))
		}
	case Delta, BytesDelta:
		if n, ok := asInt64(v); ok {
			sign, m := "+", uint64(n)
			if n < 0 {
				sign, m = "-", uint64(-n)
			} else if n == 0 {
				sign = ""
			}
			if k == Delta {
				return sign + humanize.Thousands(m)
			}
			return sign + humanize.Size(m)
		}
	}
	return fmt.Sprint(v)
}

// floatText formats the float64 values of the kinds that take them:
// means of counts and sizes, their differences, probabilities.
func floatText(k Kind, f float64) (string, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", false
	}
	sign := ""
	switch {
	case f < 0:
		sign, f = "-", -f
	case f > 0:
		sign = "+"
	}
	switch k {
	case Count:
		if sign != "-" {
			return meanCountText(f), true
		}
	case Bytes:
		if sign != "-" {
			return humanize.Size(uint64(math.Round(f))), true
		}
	case Delta:
		if math.Round(f*10) == 0 {
			sign = ""
		}
		return sign + meanCountText(f), true
	case BytesDelta:
		if math.Round(f) == 0 {
			sign = ""
		}
		return sign + humanize.Size(uint64(math.Round(f))), true
	case Probability:
		if f >= 0.001 || f == 0 {
			return strconv.FormatFloat(f, 'f', 3, 64), true
		}
		return strconv.FormatFloat(f, 'e', 1, 64), true
	}
	return "", false
}

// meanCountText writes a mean of counts (f >= 0) with thousands
// separators and one decimal when it has one: "1,250", "612.5".
func meanCountText(f float64) string {
	tenths := uint64(math.Round(f * 10))
	s := humanize.Thousands(tenths / 10)
	if d := tenths % 10; d != 0 {
		s += "." + strconv.FormatUint(d, 10)
	}
	return s
}

// Address is a node id that is an address (HPROF object ids, SpiderMonkey
// node ids, a Node.js core's objects: leak.AddressIDs) as a value of
// an ID column. People see it in hex, "@0x7f3a10", as MAT, Firefox's
// memory tool and `heapx stack` show addresses and as a pointer is
// written; CSV writes "0x7f3a10" (String), which --id reads back; JSON
// keeps the number.
type Address uint64

// String is the address in hex, as CSV writes it.
func (a Address) String() string { return "0x" + strconv.FormatUint(uint64(a), 16) }

// IDValue is node id id of g as the value of an ID column: an Address
// where g's ids are addresses, else the number.
func IDValue(g *model.Graph, id uint64) any {
	if leak.IDKindOf(g) == leak.AddressIDs {
		return Address(id)
	}
	return id
}

// IDText writes node id id of g as people see it: "@12345" for V8 (as
// DevTools does), "@0x7f3a10" where ids are addresses.
func IDText(g *model.Graph, id uint64) string {
	s, _ := idText(IDValue(g, id))
	return s
}

// idText writes an ID column's value (see IDValue).
func idText(v any) (string, bool) {
	switch x := v.(type) {
	case Address:
		return "@0x" + strconv.FormatUint(uint64(x), 16), true
	case uint64:
		return "@" + strconv.FormatUint(x, 10), true
	}
	if n, ok := asInt64(v); ok {
		return "@" + strconv.FormatInt(n, 10), true
	}
	return "", false
}

// asInt64 converts the integer types queries put in rows.
func asInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint32:
		return int64(x), true
	case uint64:
		return int64(x), true
	}
	return 0, false
}
