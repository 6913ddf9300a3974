package sourcemap

import (
	"bytes"
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// LinkedURL returns the source map URL a script's text names in its
// trailing //# sourceMappingURL= comment (or the older //@ form), ""
// when it names none. It reads the script's last lines without parsing
// it, as the format's linking section says: only comments and white
// space may follow the one that names the map, and a comment holding a
// quote or "*/" is taken for part of a string or block comment, so the
// map is not trusted to it.
func LinkedURL(script []byte) string {
	for end := len(script); end > 0; {
		start := lastLineStart(script[:end])
		line := script[start:end]
		u, verdict := matchLine(line)
		switch verdict {
		case lineURL:
			return u
		case lineStop:
			return ""
		}
		end = start
		// Step back over the line break that ended the line before.
		if end > 0 {
			_, size := lastBreak(script[:end])
			end -= size
		}
	}
	return ""
}

// lastLineStart returns where the last line of b starts: after its last
// line terminator (\n, \r, U+2028 or U+2029).
func lastLineStart(b []byte) int {
	for i := len(b); i > 0; {
		r, size := utf8.DecodeLastRune(b[:i])
		if r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029' {
			return i
		}
		i -= size
	}
	return 0
}

// lastBreak returns the line terminator b ends with and its size
// ("\r\n" counts as one).
func lastBreak(b []byte) (string, int) {
	if bytes.HasSuffix(b, []byte("\r\n")) {
		return "\r\n", 2
	}
	r, size := utf8.DecodeLastRune(b)
	return string(r), size
}

type lineVerdict uint8

const (
	lineNext lineVerdict = iota // blank, or a comment naming no map
	lineURL                     // the comment names the map
	lineStop                    // code: no map comment can come before
)

// matchLine reads one line from the end of a script.
func matchLine(line []byte) (string, lineVerdict) {
	for i := 0; i < len(line); {
		r, size := utf8.DecodeRune(line[i:])
		switch {
		case r == '/' && i+1 < len(line) && line[i+1] == '/':
			comment := line[i+2:]
			if bytes.ContainsAny(comment, "\"'`") || bytes.Contains(comment, []byte("*/")) {
				return "", lineStop
			}
			if u, ok := matchComment(string(comment)); ok {
				return u, lineURL
			}
			return "", lineNext
		case unicode.IsSpace(r) || r == '\uFEFF':
			i += size
		default:
			return "", lineStop
		}
	}
	return "", lineNext
}

// matchComment matches "[@#] sourceMappingURL=URL" with white space
// allowed around, the URL being what has no white space.
func matchComment(c string) (string, bool) {
	if c == "" || c[0] != '#' && c[0] != '@' {
		return "", false
	}
	rest, ok := strings.CutPrefix(strings.TrimLeftFunc(c[1:], unicode.IsSpace), "sourceMappingURL=")
	if !ok {
		return "", false
	}
	u := strings.TrimRightFunc(rest, unicode.IsSpace)
	if strings.IndexFunc(u, unicode.IsSpace) >= 0 {
		return "", false
	}
	return u, true
}

// IsDataURL reports whether a source map URL holds the map itself.
func IsDataURL(u string) bool {
	return len(u) >= 5 && strings.EqualFold(u[:5], "data:")
}

// DataURL decodes a data: URL's contents: base64 when its media type
// says ";base64", percent-encoded otherwise.
func DataURL(u string) ([]byte, error) {
	if !IsDataURL(u) {
		return nil, errors.New("not a data: URL")
	}
	meta, data, ok := strings.Cut(u[5:], ",")
	if !ok {
		return nil, errors.New("a data: URL without ','")
	}
	if strings.HasSuffix(strings.ToLower(strings.TrimSpace(meta)), ";base64") {
		data = strings.Map(func(r rune) rune {
			if unicode.IsSpace(r) {
				return -1
			}
			return r
		}, data)
		if s, err := url.PathUnescape(data); err == nil {
			data = s
		}
		data = strings.TrimRight(data, "=")
		b, err := base64.RawStdEncoding.DecodeString(data)
		if err != nil {
			// Some generators use the URL-safe alphabet.
			if b2, err2 := base64.RawURLEncoding.DecodeString(data); err2 == nil {
				return b2, nil
			}
			return nil, errors.New("a data: URL whose base64 does not decode: " + err.Error())
		}
		return b, nil
	}
	s, err := url.PathUnescape(data)
	if err != nil {
		return nil, errors.New("a data: URL whose percent-encoding does not decode")
	}
	return []byte(s), nil
}
