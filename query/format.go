package query

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/model"
)

// HumanSize formats a byte count the way the DevTools Memory panel does
// (i18n.ByteUtilities.bytesToString: decimal units, one decimal below 100),
// so numbers can be compared with the browser at a glance.
func HumanSize(n uint64) string {
	if n < 1000 {
		return strconv.FormatUint(n, 10) + " B"
	}
	units := []string{"kB", "MB", "GB", "TB"}
	v, u := float64(n)/1000, 0
	for v >= 1000 && u < len(units)-1 {
		v /= 1000
		u++
	}
	if v < 100 {
		return fmt.Sprintf("%.1f %s", v, units[u])
	}
	return fmt.Sprintf("%.0f %s", v, units[u])
}

// Thousands formats a count with thousands separators, for numbers people
// read.
func Thousands(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// PercentOf formats part/total as a percentage with one decimal.
func PercentOf(part, total uint64) string {
	if total == 0 {
		return "0.0%"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(total))
}

// Share is part/total in percent, the value of a Percent column.
func Share(part, total uint64) float64 {
	if total == 0 {
		return 0
	}
	return 100 * float64(part) / float64(total)
}

// ParseSize reads a byte size as people write it: "1500", "10MB", "512kB",
// "1.5 GB" (decimal units, as HumanSize prints) or "64MiB" (binary).
func ParseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') && t[i-1] != '.' {
		i--
	}
	num, unit := strings.TrimSpace(t[:i]), strings.ToLower(strings.TrimSpace(t[i:]))
	mult := map[string]float64{"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
		"k": 1e3, "m": 1e6, "g": 1e9, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}[unit]
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || mult == 0 || v < 0 {
		return 0, fmt.Errorf("%q is not a size (examples: 1500, 10MB, 512kB, 1GiB)", s)
	}
	return uint64(v*mult + 0.5), nil
}

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
	switch k {
	case Count:
		if n, ok := asInt64(v); ok && n >= 0 {
			return Thousands(uint64(n))
		}
	case Bytes:
		if n, ok := asInt64(v); ok && n >= 0 {
			return HumanSize(uint64(n))
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
				return sign + Thousands(m)
			}
			return sign + HumanSize(m)
		}
	}
	return fmt.Sprint(v)
}

// Address is a node id that is an address (HPROF object ids, SpiderMonkey
// node ids, a Node.js core's objects: analysis.AddressIDs) as a value of
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
	if analysis.IDKindOf(g) == analysis.AddressIDs {
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
