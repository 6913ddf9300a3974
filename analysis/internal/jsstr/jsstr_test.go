package jsstr

import (
	"sort"
	"testing"
	"unicode/utf16"
)

func TestJSStrings(t *testing.T) {
	for s, want := range map[string]int{"": 0, "abc": 3, "é": 1, "€": 1, "😀": 2, "a😀b": 4} {
		if got := Len(s); got != want {
			t.Errorf("len16(%q) = %d, want %d", s, got, want)
		}
	}
	// JavaScript sorts by UTF-16 code units: U+FF5E sorts after U+1F600's
	// high surrogate (0xD83D), unlike Go's UTF-8 order.
	words := []string{"b", "a", "\uff5e", "😀", "ab", "", "é", "😁", "a😀"}
	sort.Slice(words, func(i, j int) bool { return Compare(words[i], words[j]) < 0 })
	for i := 1; i < len(words); i++ {
		a, b := utf16.Encode([]rune(words[i-1])), utf16.Encode([]rune(words[i]))
		less := false
		for k := 0; ; k++ {
			if k == len(a) || k == len(b) {
				less = len(a) < len(b)
				break
			}
			if a[k] != b[k] {
				less = a[k] < b[k]
				break
			}
		}
		if !less {
			t.Errorf("order %q before %q is not JavaScript's", words[i-1], words[i])
		}
	}
	for in, want := range map[string]string{
		"plain": "plain", "a,b": `"a,b"`, `q"`: `"q\""`, "{x}": `"{x}"`, "it's": `"it's"`,
		"a,\n\x01\\<": `"a,\n\u0001\\<"`,
	} {
		if got := PropertyName(in); got != want {
			t.Errorf("formatPropertyName(%q) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]int64{"12": 12, " 7x": 7, "-3": -3, "+4": 4, "0012": 12} {
		if got, ok := ParseInt(in); !ok || got != want {
			t.Errorf("jsParseInt(%q) = %d %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "x1", "-", " "} {
		if _, ok := ParseInt(in); ok {
			t.Errorf("jsParseInt(%q) should be NaN", in)
		}
	}
}
