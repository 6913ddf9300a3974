package hostile

import (
	"bytes"
	"io"
	"math"

	"github.com/klauspost/compress/gzip"
	"google.golang.org/protobuf/encoding/protowire"
)

// FxsnapshotBomb writes the .fxsnapshot of issue 12.3 to w: gzip (as
// Firefox writes it) of a Metadata message and then a Node message
// declared 2^31-1 bytes long that starts with its id, as a real one does,
// followed by zeros zero bytes. With zeros filling the declared length,
// 2.1 MB inflate to 2 GB, which the reader buffered whole (6.3 GB) before
// finding that a zero byte is no field.
// The zeros are gzip members of 64 MB compressed once and repeated (a
// gzip file may hold several; Firefox's readers and heapx's take them as
// one stream), so making the 2 GB file takes a second, not half a minute.
func FxsnapshotBomb(w io.Writer, zeros int64) error {
	meta := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1700000000000000)
	head := protowire.AppendBytes(nil, meta)
	head = protowire.AppendVarint(head, math.MaxInt32)
	head = protowire.AppendVarint(protowire.AppendTag(head, 1, protowire.VarintType), 1) // the node's id
	if err := gzipMember(w, func(zw io.Writer) error { _, err := zw.Write(head); return err }); err != nil {
		return err
	}
	const chunk = 64 << 20
	var member bytes.Buffer
	for zeros > 0 {
		k := min(zeros, chunk)
		if member.Len() == 0 || k < chunk {
			member.Reset()
			if err := gzipMember(&member, func(zw io.Writer) error { return writeZeros(zw, k) }); err != nil {
				return err
			}
		}
		if _, err := w.Write(member.Bytes()); err != nil {
			return err
		}
		zeros -= k
	}
	return nil
}

// gzipMember writes one gzip member, at the best compression, holding
// what body writes.
func gzipMember(w io.Writer, body func(io.Writer) error) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	if err := body(zw); err != nil {
		return err
	}
	return zw.Close()
}

// writeZeros writes n zero bytes to w.
func writeZeros(w io.Writer, n int64) error {
	block := make([]byte, 1<<20)
	for n > 0 {
		k := min(n, int64(len(block)))
		if _, err := w.Write(block[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}
