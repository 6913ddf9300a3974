package jsonl

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/heapx/heapx/formats/internal/jsonstr"
	"github.com/heapx/heapx/internal/wtf8"
)

// cursor parses the JSON values of one line in place, for the reader and
// for each of the parallel parser's workers. It is deliberately small: a
// line is an array of numbers, strings, null and (in declarations and
// sections) arrays, and a hand-written parser over the line's bytes is
// several times faster than encoding/json and allocates nothing.
//
// No value and no space between values takes in a newline, which ends
// every line of JSON Lines (a string holding one would have it escaped),
// so a cursor can be set over more than one line: the workers set theirs
// over the rest of a block, and a record ends where its line does.
type cursor struct {
	b       []byte
	i       int
	scratch []byte // unescaped strings
	skipped []byte // unescaped strings of skipped values
}

// The cursor's errors are wrapped with the line number by the reader.
var errEnd = errors.New("line ends early")

func (c *cursor) ws() { c.i = skipSpace(c.b, c.i) }

// skipSpace returns the index of the first byte of b from i on that is
// not a space, a tab or a carriage return (JSON's whitespace but the
// newline, which ends the line).
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// found describes the next byte for an error message.
func (c *cursor) found() string {
	if c.i >= len(c.b) {
		return "the end of the line"
	}
	ch := c.b[c.i]
	if ch >= 0x20 && ch < 0x7f {
		return fmt.Sprintf("%q", rune(ch))
	}
	return fmt.Sprintf("byte 0x%02x", ch)
}

// expect consumes the byte ch after optional whitespace.
func (c *cursor) expect(ch byte, what string) error {
	c.ws()
	if c.i < len(c.b) && c.b[c.i] == ch {
		c.i++
		return nil
	}
	return fmt.Errorf("expected %s, found %s", what, c.found())
}

// peek returns the next non-space byte without consuming it (0 at the end).
func (c *cursor) peek() byte {
	c.ws()
	if c.i < len(c.b) {
		return c.b[c.i]
	}
	return 0
}

// null consumes a JSON null if one is next.
func (c *cursor) null() bool {
	c.ws()
	if len(c.b)-c.i >= 4 && string(c.b[c.i:c.i+4]) == "null" {
		c.i += 4
		return true
	}
	return false
}

// uint parses an unsigned decimal integer of up to 64 bits. Up to 19
// digits cannot overflow, so only a 20th is checked.
func (c *cursor) uint(what string) (uint64, error) {
	if c.i < len(c.b) && c.b[c.i] <= ' ' {
		c.ws()
	}
	b := c.b
	start := c.i
	v, i := digits(b, start)
	for ; i < len(b) && b[i]-'0' <= 9; i++ {
		d := b[i] - '0'
		if v > (1<<64-1-uint64(d))/10 {
			c.i = i
			return 0, fmt.Errorf("%s %s does not fit in 64 bits", what, b[start:i+1])
		}
		v = v*10 + uint64(d)
	}
	c.i = i
	if c.i == start {
		return 0, fmt.Errorf("expected %s (an unsigned integer), found %s", what, c.found())
	}
	if c.i-start > 1 && c.b[start] == '0' {
		return 0, fmt.Errorf("%s %s has a leading zero", what, c.b[start:c.i])
	}
	if c.i < len(c.b) && (c.b[c.i] == '.' || c.b[c.i] == 'e' || c.b[c.i] == 'E') {
		return 0, fmt.Errorf("expected %s (an integer), found a fraction or exponent", what)
	}
	return v, nil
}

// digits parses up to 19 decimal digits at b[i:], which cannot overflow,
// and returns their value and the index after them.
func digits(b []byte, i int) (uint64, int) {
	var v uint64
	for end := min(len(b), i+19); i < end; i++ {
		d := b[i] - '0'
		if d > 9 {
			break
		}
		v = v*10 + uint64(d)
	}
	return v, i
}

// int parses a signed decimal integer of up to 64 bits.
func (c *cursor) int(what string) (int64, error) {
	c.ws()
	neg := c.i < len(c.b) && c.b[c.i] == '-'
	if neg {
		c.i++
	}
	if neg && (c.i >= len(c.b) || c.b[c.i] < '0' || c.b[c.i] > '9') {
		return 0, fmt.Errorf("expected %s (an integer), found %s", what, c.found())
	}
	v, err := c.uint(what)
	if err != nil {
		return 0, err
	}
	if neg {
		if v > 1<<63 {
			return 0, fmt.Errorf("%s -%d does not fit in 64 bits", what, v)
		}
		return -int64(v), nil
	}
	if v > 1<<63-1 {
		return 0, fmt.Errorf("%s %d does not fit in a signed 64-bit integer", what, v)
	}
	return int64(v), nil
}

// intRange parses a signed integer in [lo, hi].
func (c *cursor) intRange(what string, lo, hi int64) (int64, error) {
	v, err := c.int(what)
	if err == nil && (v < lo || v > hi) {
		err = fmt.Errorf("%s %d is out of range [%d, %d]", what, v, lo, hi)
	}
	return v, err
}

// intOrNull checks that an integer or null is next and skips it: a third
// of the general skip's cost (no token copy, no float parse).
func (c *cursor) intOrNull(what string) (err error) {
	switch {
	case c.null():
	case c.i < len(c.b) && c.b[c.i] == '-':
		_, err = c.int(what)
	default:
		_, err = c.uint(what)
	}
	return err
}

// number parses the value of a number field, as n says it may be, and
// reports whether it was null.
func (c *cursor) number(n *number) (uint64, bool, error) {
	if n.nullable && c.null() {
		return 0, true, nil
	}
	if n.signed {
		x, err := c.intRange(n.what, n.min, int64(n.max))
		return uint64(x), false, err
	}
	v, err := c.uint(n.what)
	if err == nil && v > n.max {
		err = fmt.Errorf("%s %d is larger than %d", n.what, v, n.max)
	}
	return v, false, err
}

// readRow reads the fields at b[i:] of a record whose fields are all
// numbers into num, if each is the usual value: unsigned, without sign or
// leading zero, up to 19 digits, or null, right after its ',' and with a
// ',' or ']' right after it, or if spaced with spaces (skipSpace's)
// between. Nearly every node and edge line is such a row, and this tight
// loop over it, the reader's innermost, takes a quarter off the time the
// workers take to parse a block read field by field (a function, not a
// method: the loop keeps its values in registers). On any other line it
// reads nothing and reports false: decodeFields then reads the line field
// by field, to the same values or to the error. It returns the index
// after the fields and the fields that were null.
func readRow(b []byte, i int, fields []rowField, num []uint64, spaced bool) (int, nulls, bool) {
	var isNull nulls
	for _, f := range fields {
		if i >= len(b) || b[i] != ',' {
			if !spaced {
				return 0, 0, false
			}
			if i = skipSpace(b, i); i >= len(b) || b[i] != ',' {
				return 0, 0, false
			}
		}
		i++
		if spaced && i < len(b) && b[i] <= ' ' {
			i = skipSpace(b, i)
		}
		v, j := uint64(0), i
		for j < len(b) && b[j]-'0' <= 9 && j-i < 19 {
			v = v*10 + uint64(b[j]-'0')
			j++
		}
		switch {
		case j == i:
			if !f.nullable || len(b)-i < 4 || string(b[i:i+4]) != "null" {
				return 0, 0, false
			}
			j += 4
			isNull |= 1 << f.slot
		case v > f.max || b[i] == '0' && j-i > 1:
			return 0, 0, false
		}
		if j == len(b) || b[j] != ',' && b[j] != ']' {
			if !spaced {
				return 0, 0, false
			}
			if j = skipSpace(b, j); j == len(b) || b[j] != ',' && b[j] != ']' {
				return 0, 0, false
			}
		}
		if int(f.slot) < len(num) {
			num[f.slot] = v
		}
		i = j
	}
	return i, isNull, true
}

// str parses a JSON string. The result aliases the line or the cursor's
// scratch buffer and is valid until the next call but skip's. Escaped
// lone surrogates become WTF-8, as the V8 reader makes them, so a
// JavaScript string survives any round trip.
func (c *cursor) str(what string) ([]byte, error) {
	return c.decodeStr(what, &c.scratch)
}

// decodeStr parses a JSON string, unescaping it into *buf if it must.
func (c *cursor) decodeStr(what string, buf *[]byte) ([]byte, error) {
	c.ws()
	if c.i >= len(c.b) || c.b[c.i] != '"' {
		return nil, fmt.Errorf("expected %s (a string), found %s", what, c.found())
	}
	c.i++
	start := c.i
	c.i += jsonstr.Literal(c.b[c.i:], true)
	if c.i < len(c.b) && c.b[c.i] == '"' {
		// No escapes: the string is in the line as it is.
		s := c.b[start:c.i]
		c.i++
		return s, checkUTF8(s, what)
	}
	out := append((*buf)[:0], c.b[start:c.i]...)
	for {
		if c.i >= len(c.b) {
			return nil, fmt.Errorf("%s: string not terminated before the end of the line", what)
		}
		switch ch := c.b[c.i]; {
		case ch == '"':
			c.i++
			*buf = out
			return out, checkUTF8(out, what)
		case ch < 0x20:
			return nil, fmt.Errorf("%s: unescaped control character 0x%02x in a string", what, ch)
		}
		var n int
		var p jsonstr.Problem
		out, n, p = jsonstr.Unescape(out, c.b[c.i:])
		c.i += n
		switch p {
		case jsonstr.Cut:
			return nil, fmt.Errorf("%s: escape cut at the end of the line", what)
		case jsonstr.CutHex, jsonstr.BadHex:
			return nil, fmt.Errorf("%s: bad \\u escape", what)
		case jsonstr.BadEscape:
			return nil, fmt.Errorf("%s: invalid escape \\%c", what, c.b[c.i-1])
		}
		k := jsonstr.Literal(c.b[c.i:], true)
		out = append(out, c.b[c.i:c.i+k]...)
		c.i += k
	}
}

// text parses a JSON string into a Go string.
func (c *cursor) text(what string) (string, error) {
	b, err := c.str(what)
	return string(b), err
}

// checkUTF8 rejects raw bytes that are not UTF-8: a flat file is UTF-8
// text (docs/format.md, 5.1), and a string that is not would not survive
// being written again. Lone surrogates, which \u escapes may hold, are
// WTF-8 by then and allowed.
func checkUTF8(s []byte, what string) error {
	if !wtf8.Valid(s) {
		return fmt.Errorf("%s: string holds bytes that are not UTF-8", what)
	}
	return nil
}

// nextStr parses a comma and the string after it: the next field of a
// record with a fixed layout.
func (c *cursor) nextStr(what string) ([]byte, error) {
	if err := c.expect(',', "','"); err != nil {
		return nil, err
	}
	return c.str(what)
}

// strs parses an array of strings (null is an empty array).
func (c *cursor) strs(what string) ([]string, error) {
	if c.null() {
		return nil, nil
	}
	var out []string
	err := c.array(what+" (an array of strings)", "',' or ']' in "+what, func() error {
		s, err := c.str(what + " element")
		out = append(out, string(s))
		return err
	})
	return out, err
}

// subtypeFields parses a node_type's fields: an array of [name, kind]
// pairs. Only the names matter to this reader, which skips the values.
func (c *cursor) subtypeFields() ([]string, error) {
	if c.null() {
		return nil, nil
	}
	var names []string
	err := c.array("'[' starting the subtype fields", "',' or ']' in the subtype fields", func() error {
		if err := c.expect('[', "'[' starting a [name, kind] pair"); err != nil {
			return err
		}
		n, err := c.str("subtype field name")
		if err != nil {
			return err
		}
		names = append(names, string(n))
		if _, err := c.nextStr("subtype field kind"); err != nil {
			return err
		}
		return c.expect(']', "']' ending a [name, kind] pair")
	})
	return names, err
}

// int64s parses an array of signed integers: a section's values.
func (c *cursor) int64s() ([]int64, error) {
	vals := []int64{}
	err := c.array("'[' starting the section's values", "',' or ']' in the section's values", func() error {
		v, err := c.int("section value")
		vals = append(vals, v)
		return err
	})
	return vals, err
}

// array parses a JSON array, each element with elem. open names the '['
// in an error, more the ',' or ']' after an element.
func (c *cursor) array(open, more string, elem func() error) error {
	if err := c.expect('[', open); err != nil {
		return err
	}
	if c.peek() == ']' {
		c.i++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		if c.peek() == ']' {
			c.i++
			return nil
		}
		if err := c.expect(',', more); err != nil {
			return err
		}
	}
}

// end checks that the record's array ends here and nothing follows on
// its line. A cursor over a line ends with it; the parallel parser's, over
// the rest of a block, at the newline, which end steps over.
func (c *cursor) end() error {
	if rest := c.b[c.i:]; len(rest) > 0 && rest[0] == ']' && (len(rest) == 1 || rest[1] == '\n') {
		c.i += min(len(rest), 2)
		return nil
	}
	return c.endSlow()
}

func (c *cursor) endSlow() error {
	if err := c.expect(']', "']' ending the record"); err != nil {
		return err
	}
	c.ws()
	if c.i < len(c.b) && c.b[c.i] == '\n' {
		c.i++
		return nil
	}
	if c.i != len(c.b) {
		return fmt.Errorf("unexpected %s after the record", c.found())
	}
	return nil
}

// skip consumes one JSON value of any shape: a field the reader does not
// know. It is iterative, so hostile nesting cannot exhaust the stack.
func (c *cursor) skip() error {
	depth := 0
	for {
		c.ws()
		if c.i >= len(c.b) {
			return errEnd
		}
		switch ch := c.b[c.i]; {
		case ch == '[' || ch == '{':
			depth++
			c.i++
			continue
		case ch == ']' || ch == '}':
			if depth == 0 {
				return fmt.Errorf("expected a value, found %s", c.found())
			}
			depth--
			c.i++
		case ch == '"':
			// Into a buffer of its own: a string read before the
			// skipped field stays valid.
			if _, err := c.decodeStr("value", &c.skipped); err != nil {
				return err
			}
		case ch == '-' || ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'z':
			start := c.i
			for c.i < len(c.b) && (c.b[c.i] == '-' || c.b[c.i] == '+' || c.b[c.i] == '.' || c.b[c.i] >= '0' && c.b[c.i] <= '9' || c.b[c.i] >= 'a' && c.b[c.i] <= 'z' || c.b[c.i] == 'E') {
				c.i++
			}
			tok := string(c.b[start:c.i])
			if tok[0] >= 'a' && tok != "null" && tok != "true" && tok != "false" {
				return fmt.Errorf("expected a value, found %q", tok)
			}
			if tok[0] < 'a' {
				if _, err := strconv.ParseFloat(tok, 64); err != nil {
					return fmt.Errorf("bad number %q", tok)
				}
			}
		default:
			return fmt.Errorf("expected a value, found %s", c.found())
		}
		// After a value: a separator, or the end of the container.
		if depth == 0 {
			return nil
		}
		c.ws()
		if c.i < len(c.b) && c.b[c.i] == ',' {
			c.i++
			continue
		}
		if c.i < len(c.b) && c.b[c.i] == ':' {
			c.i++
			continue
		}
		if c.i < len(c.b) && (c.b[c.i] == ']' || c.b[c.i] == '}') {
			continue
		}
		return fmt.Errorf("expected ',' or the end of an array, found %s", c.found())
	}
}
