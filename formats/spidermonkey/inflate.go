package spidermonkey

import "io"

// inflateBlocks is how many decompressed blocks are in flight: one being
// parsed, one ready, one being filled.
const inflateBlocks = 3

// asyncReader runs a reader (the gzip decompressor) on its own goroutine,
// a block or two ahead of the parser, so that inflating and decoding use
// two cores: inflating is about a fifth of a read.
type asyncReader struct {
	blocks chan block
	free   chan []byte
	done   chan struct{}
	exited chan struct{}
	cur    []byte // the unread part of the block being consumed
	last   []byte // that block, to hand back when it is used up
	err    error
}

type block struct {
	b   []byte
	err error
}

// newAsyncReader starts reading r in blocks of size bytes; close is called
// on r when reading ends. Close must be called to stop it.
func newAsyncReader(r io.Reader, size int, close func()) *asyncReader {
	a := &asyncReader{
		blocks: make(chan block, inflateBlocks-1),
		free:   make(chan []byte, inflateBlocks),
		done:   make(chan struct{}),
		exited: make(chan struct{}),
	}
	for range inflateBlocks {
		a.free <- make([]byte, size)
	}
	go func() {
		defer close()
		defer func() { a.exited <- struct{}{} }()
		for {
			var buf []byte
			select {
			case buf = <-a.free:
			case <-a.done:
				return
			}
			// Fill the block (a decompressor returns little at a time),
			// keeping the error as it is: io.ReadFull would turn an
			// EOF after some bytes into io.ErrUnexpectedEOF, which a
			// truncated gzip stream reports.
			n := 0
			var err error
			for n < len(buf) && err == nil {
				var k int
				k, err = r.Read(buf[n:])
				n += k
			}
			select {
			case a.blocks <- block{buf[:n], err}:
			case <-a.done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return a
}

func (a *asyncReader) Read(p []byte) (int, error) {
	for len(a.cur) == 0 {
		if a.err != nil {
			return 0, a.err
		}
		if a.last != nil {
			a.free <- a.last[:cap(a.last)]
			a.last = nil
		}
		b := <-a.blocks
		a.cur, a.last, a.err = b.b, b.b, b.err
	}
	n := copy(p, a.cur)
	a.cur = a.cur[n:]
	return n, nil
}

// Close stops the goroutine and waits for it, so nothing reads the input
// after the read returns.
func (a *asyncReader) Close() {
	close(a.done)
	<-a.exited
}
