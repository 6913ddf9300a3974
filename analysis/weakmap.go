package analysis

import (
	"regexp"

	"github.com/heapx/heapx/model"
)

// weakMapEdgeRE is DevTools' ephemeronNameRegex (tryParseWeakMapEdgeName),
// with JavaScript's "." (anything but a line terminator) spelled out. The
// first group is the part two edges of one WeakMap entry share.
var weakMapEdgeRE = regexp.MustCompile(`^\d+( / part of key \([^\n\r\x{2028}\x{2029}]*? @\d+\) -> value \([^\n\r\x{2028}\x{2029}]*? @\d+\) pair in WeakMap \(table @(\d+)\))$`)

// weakMapNames caches, per string, whether it names a WeakMap entry edge
// and the part of the name both edges of the entry share.
type weakMapNames struct {
	g     *model.Graph
	state []uint8 // 0 unknown, 1 no, 2 yes
	dup   map[model.StringID]string
}

func newWeakMapNames(g *model.Graph) *weakMapNames {
	return &weakMapNames{g: g, state: make([]uint8, g.Strings.Len()), dup: map[model.StringID]string{}}
}

// match returns the shared part of a WeakMap entry edge's name, or false.
func (w *weakMapNames) match(s model.StringID) (string, bool) {
	switch w.state[s] {
	case 1:
		return "", false
	case 2:
		return w.dup[s], true
	}
	m := weakMapEdgeRE.FindStringSubmatchIndex(w.g.Strings.At(s))
	if m == nil {
		w.state[s] = 1
		return "", false
	}
	w.state[s] = 2
	d := w.g.Strings.At(s)[m[2]:m[3]]
	w.dup[s] = d
	return d, true
}
