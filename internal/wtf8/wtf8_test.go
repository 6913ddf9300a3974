package wtf8

import "testing"

func TestSanitize(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain", "plain"},
		{"é€😀", "é€😀"},
		{"\xed\xa0\x80", "\xed\xa0\x80"},             // lone high surrogate, kept
		{"a\xed\xb0\x80b", "a\xed\xb0\x80b"},         // lone low surrogate, kept
		{"x\xb8y", "x\uFFFDy"},                       // stray continuation byte
		{"\xff\xfe", "\uFFFD\uFFFD"},                 // never valid
		{"\xe2\x82", "\uFFFD\uFFFD"},                 // cut sequence
		{"\xed\xa0\x80\xb8é", "\xed\xa0\x80\uFFFDé"}, // both in one string
		{"\xed\xa0", "\uFFFD\uFFFD"},                 // cut surrogate
		{"\xc0\xaf", "\uFFFD\uFFFD"},                 // overlong
		// A high surrogate then a low one is their character, as their
		// \u escapes decode (the fuzzer's find: written back as escapes,
		// the pair read back as one character).
		{"\xed\xa0\x80\xed\xb0\x80", "\U00010000"},
		{"a\xed\xa0\xbd\xed\xb8\x80\xed\xa0\x80", "a😀\xed\xa0\x80"},
		{"\xed\xa0\x80\xed\xa0\x80\xed\xb0\x80", "\xed\xa0\x80\U00010000"},
		{"\xed\xb0\x80\xed\xa0\x80", "\xed\xb0\x80\xed\xa0\x80"}, // low then high: two lone ones
	} {
		if got := string(Sanitize([]byte(c.in))); got != c.want {
			t.Errorf("Sanitize(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := Valid([]byte(c.in)); got != (c.in == c.want) {
			t.Errorf("Valid(%q) = %v", c.in, got)
		}
	}
}

func TestSurrogateAt(t *testing.T) {
	for u := rune(0xD800); u < 0xE000; u++ {
		b := AppendSurrogate([]byte("x"), u)
		if got, ok := SurrogateAt(b, 1); !ok || got != u {
			t.Fatalf("SurrogateAt(AppendSurrogate(%#x)) = %#x, %v", u, got, ok)
		}
		if _, ok := SurrogateAt(string(b), 0); ok {
			t.Fatalf("SurrogateAt at the 'x' of %q", b)
		}
	}
	if _, ok := SurrogateAt("\xed\x9f\xbf", 0); ok { // U+D7FF is a character
		t.Error("U+D7FF taken for a surrogate")
	}
}
