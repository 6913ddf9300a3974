package sourcemap

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/heapx/heapx/formats/internal/jsonstr"
)

// scanner reads the JSON of a source map in place. A map is one object
// with a few keys heapx needs (mappings, sources, names) beside large
// ones it may never look at (sourcesContent is often most of the file):
// reading it in place lets the mappings stay a slice of the input, the
// contents be found by offset and decoded only when asked for, and
// unknown keys be skipped without building anything. encoding/json would
// copy every string of a 10 MB map at a third of the speed (measured in
// BenchmarkParse's comment).
type scanner struct {
	b []byte
	i int
}

// errAt is a problem at byte offset at, worded as what was expected.
type errAt struct {
	at  int
	msg string
}

func (e *errAt) Error() string { return e.msg }

func (s *scanner) fail(msg string, args ...any) error {
	return &errAt{at: s.i, msg: fmt.Sprintf(msg, args...)}
}

// ws skips white space.
func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i == len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// expect consumes c after white space.
func (s *scanner) expect(c byte, what string) error {
	if s.peek() != c {
		return s.unexpected(what)
	}
	s.i++
	return nil
}

// unexpected words what is at the offset and what was wanted instead.
func (s *scanner) unexpected(want string) error {
	if s.i >= len(s.b) {
		return s.fail("the map ends early: want %s", want)
	}
	return s.fail("want %s, found %q", want, s.b[s.i])
}

// object calls field for each key of the object at the offset, with the
// scanner at the key's value, which field must consume.
func (s *scanner) object(field func(key []byte) error) error {
	if err := s.expect('{', "an object"); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		if s.peek() != '"' {
			return s.unexpected("a key")
		}
		start, end, escaped, err := s.span()
		if err != nil {
			return err
		}
		key := s.b[start:end]
		if escaped {
			// No key heapx reads is spelt with escapes; an escaped one
			// is some other key, whose value is skipped.
			key = nil
		}
		if err := s.expect(':', "':' after a key"); err != nil {
			return err
		}
		if err := field(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.unexpected("',' or '}' in an object")
		}
	}
}

// array calls item for each element of the array at the offset, with
// the scanner at the element, which item must consume.
func (s *scanner) array(item func(i int) error) error {
	if err := s.expect('[', "an array"); err != nil {
		return err
	}
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for n := 0; ; n++ {
		s.ws()
		if err := item(n); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return s.unexpected("',' or ']' in an array")
		}
	}
}

// span consumes the string at the offset and returns where its contents
// lie in the input, and whether they hold escapes (then they are to be
// decoded with unquote).
func (s *scanner) span() (start, end int, escaped bool, err error) {
	if err := s.expect('"', "a string"); err != nil {
		return 0, 0, false, err
	}
	start = s.i
	var buf [utf8.UTFMax * 2]byte // what one escape decodes to, checked and dropped
	for {
		s.i += jsonstr.Literal(s.b[s.i:], true)
		if s.i == len(s.b) {
			return 0, 0, false, s.fail("the map ends inside a string")
		}
		switch c := s.b[s.i]; {
		case c == '"':
			end = s.i
			s.i++
			return start, end, escaped, nil
		case c == '\\':
			escaped = true
			_, n, p := jsonstr.Unescape(buf[:0], s.b[s.i:min(len(s.b), s.i+jsonstr.MaxEscape)])
			if p != jsonstr.OK {
				return 0, 0, false, s.fail("a bad escape in a string")
			}
			s.i += n
		default:
			return 0, 0, false, s.fail("a control character (%#x) in a string", c)
		}
	}
}

// unquote decodes the contents of a string span checked by span.
func unquote(b []byte) string {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		n := jsonstr.Literal(b[i:], false)
		out = append(out, b[i:i+n]...)
		i += n
		if i < len(b) {
			var m int
			out, m, _ = jsonstr.Unescape(out, b[i:min(len(b), i+jsonstr.MaxEscape)])
			i += m
		}
	}
	return string(out)
}

// str consumes a string and returns it decoded.
func (s *scanner) str() (string, error) {
	start, end, escaped, err := s.span()
	if err != nil {
		return "", err
	}
	if escaped {
		return unquote(s.b[start:end]), nil
	}
	return string(s.b[start:end]), nil
}

// literal consumes the keyword word.
func (s *scanner) literal(word string) error {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return s.unexpected(word)
	}
	s.i += len(word)
	return nil
}

// number consumes a JSON number and returns its text.
func (s *scanner) number() ([]byte, error) {
	s.ws()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	intStart := s.i
	if digits() == 0 {
		return nil, s.unexpected("a number")
	}
	if s.b[intStart] == '0' && s.i-intStart > 1 {
		s.i = intStart + 1
		return nil, s.unexpected("a number without leading zeros")
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return nil, s.unexpected("a digit after '.'")
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return nil, s.unexpected("a digit in an exponent")
		}
	}
	return s.b[start:s.i], nil
}

// integer consumes a number and returns it when it is an integer that
// fits in an int32 (what a version, an offset or an index is); ok is
// false for another number, which is consumed all the same.
func (s *scanner) integer() (v int32, ok bool, err error) {
	text, err := s.number()
	if err != nil {
		return 0, false, err
	}
	f, perr := strconv.ParseFloat(string(text), 64)
	if perr != nil || f != float64(int32(f)) {
		return 0, false, nil
	}
	return int32(f), true, nil
}

// skip consumes any value, however nested, without building it. Nesting
// is tracked on a stack of its own, not the goroutine's: a value nested a
// million deep costs a million bytes, not a stack overflow.
func (s *scanner) skip() error {
	var open []byte // the closing bracket each open container wants
	for {
		c := s.peek()
		switch c {
		case '{':
			s.i++
			open = append(open, '}')
			if s.peek() == '}' {
				s.i++
				break
			}
			if _, _, _, err := s.span(); err != nil {
				return err
			}
			if err := s.expect(':', "':' after a key"); err != nil {
				return err
			}
			continue
		case '[':
			s.i++
			open = append(open, ']')
			if s.peek() == ']' {
				s.i++
				break
			}
			continue
		case '"':
			if _, _, _, err := s.span(); err != nil {
				return err
			}
		case 't':
			if err := s.literal("true"); err != nil {
				return err
			}
		case 'f':
			if err := s.literal("false"); err != nil {
				return err
			}
		case 'n':
			if err := s.literal("null"); err != nil {
				return err
			}
		default:
			if _, err := s.number(); err != nil {
				return err
			}
		}
		// A value ended: close what it ends, then go to the next one.
		for {
			if c == '{' || c == '[' {
				// An empty container closed above.
				open = open[:len(open)-1]
				c = 0
			}
			if len(open) == 0 {
				return nil
			}
			close := open[len(open)-1]
			switch s.peek() {
			case ',':
				s.i++
				if close == '}' {
					if _, _, _, err := s.span(); err != nil {
						return err
					}
					if err := s.expect(':', "':' after a key"); err != nil {
						return err
					}
				}
			case close:
				s.i++
				open = open[:len(open)-1]
				continue
			default:
				return s.unexpected(fmt.Sprintf("',' or '%c'", close))
			}
			break
		}
	}
}
