// Package parallel runs the analysis packages' passes over node and edge
// ranges on every core.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Workers is how many goroutines a parallel pass uses.
func Workers() int {
	w := runtime.GOMAXPROCS(0)
	if w < 1 {
		w = 1
	}
	return w
}

// Chunks calls fn(lo, hi) for consecutive chunks of [0, n) on all
// cores; chunks are handed out dynamically, so callers must not depend on
// which goroutine runs which chunk. Small inputs run on the caller's
// goroutine.
func Chunks(n, chunk int, fn func(lo, hi int)) {
	w := Workers()
	if w == 1 || n <= chunk {
		for lo := 0; lo < n; lo += chunk {
			fn(lo, min(lo+chunk, n))
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < w; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				lo := int(next.Add(int64(chunk))) - chunk
				if lo >= n {
					return
				}
				fn(lo, min(lo+chunk, n))
			}
		}()
	}
	wg.Wait()
}

// OnEveryCore runs fn on every core at once and waits for all.
func OnEveryCore(fn func()) {
	w := Workers()
	var wg sync.WaitGroup
	for i := 0; i < w; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn()
		}()
	}
	wg.Wait()
}
