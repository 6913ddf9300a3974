// Package humanize writes sizes and counts for people, as every heapx
// front end and report shows them: sizes in DevTools' decimal units
// ("3.6 MB"), counts with thousands separators, shares of a total in
// percent; and it reads sizes as people write them ("10MB", "1GiB").
package humanize

import (
	"fmt"
	"strconv"
	"strings"
)

// Size formats a byte count the way the DevTools Memory panel does
// (i18n.ByteUtilities.bytesToString: decimal units, one decimal below 100),
// so numbers can be compared with the browser at a glance.
func Size(n uint64) string {
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

// Percent formats part/total as a percentage with one decimal.
func Percent(part, total uint64) string {
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
// "1.5 GB" (decimal units, as Size prints) or "64MiB" (binary).
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
