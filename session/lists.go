package session

import (
	"strconv"
	"sync"
)

// listCache keeps the lists the latest requests sorted (an object's
// retainers by distance, its dominator-tree children by retained size, a
// class's new objects), so that the next page of the same list is a
// slice, not another scan of the heap. It holds at most maxLists lists,
// dropping the one used longest ago; two requests for a list being built
// wait for the one build.
type listCache struct {
	mu      sync.Mutex
	entries []*listEntry // most recently used first
}

type listEntry struct {
	key  string
	once sync.Once
	list []int32
}

const maxLists = 16

func (c *listCache) get(key string, build func() []int32) []int32 {
	c.mu.Lock()
	var e *listEntry
	for i, x := range c.entries {
		if x.key == key {
			e = x
			copy(c.entries[1:i+1], c.entries[:i])
			c.entries[0] = e
			break
		}
	}
	if e == nil {
		e = &listEntry{key: key}
		if len(c.entries) == maxLists {
			c.entries = c.entries[:maxLists-1]
		}
		c.entries = append([]*listEntry{e}, c.entries...)
	}
	c.mu.Unlock()
	e.once.Do(func() { e.list = build() })
	return e.list
}

func itoa(n int) string { return strconv.Itoa(n) }
