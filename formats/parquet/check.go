package parquet

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/heapx/heapx/formats"
)

// parquet-go trusts what a file says about its own layout: it allocates
// a page's declared size before reading it, a dictionary's declared
// count before decoding it, and the footer's declared length before
// reading that. A damaged or crafted file can so make it reserve
// gigabytes for a few bytes (and a machine that does not overcommit
// memory then kills heapx). The checks below read what the file says
// (its tail, its footer's counts, every page header) and refuse a lie
// before parquet-go acts on it, naming the column, row group and byte.

// checkTail reads the last 8 bytes of a file of size bytes: the
// footer's length and the magic "PAR1". It returns where the footer
// starts (the end of the pages).
func checkTail(f *os.File, path string, size int64) (int64, error) {
	fail := func(format string, args ...any) error {
		return &formats.FormatError{File: path, Offset: size - 8, Msg: fmt.Sprintf(format, args...)}
	}
	if size < 12 {
		return 0, fail("%d bytes is too short for a Parquet file (at least 12)", size)
	}
	var tail [8]byte
	if _, err := f.ReadAt(tail[:], size-8); err != nil {
		return 0, err
	}
	if string(tail[4:]) != "PAR1" {
		return 0, fail("it does not end with the Parquet magic \"PAR1\" (truncated, encrypted or not Parquet)")
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > size-12 {
		return 0, fail("its footer declares %d bytes, more than the file's %d (truncated?)", n, size)
	}
	return size - 8 - n, nil
}

// checkLayout checks the footer's counts against each other and every
// column chunk's pages against the footer: each chunk lies within the
// pages, each page header decodes and fits in its chunk, the data pages
// hold the values the footer counts, a flat column has a value per row,
// and no dictionary is longer than its chunk. pagesEnd is where the
// footer starts.
func (t *table) checkLayout(pagesEnd int64) error {
	md := t.pf.Metadata()
	leaves := t.pf.Schema().Columns()
	var rows int64
	for g := range md.RowGroups {
		rg := &md.RowGroups[g]
		if rg.NumRows < 0 || rg.NumRows > md.NumRows-rows {
			return t.fail(-1, "row group %d declares %d rows, more than the file's %d", g, rg.NumRows, md.NumRows)
		}
		rows += rg.NumRows
		if len(rg.Columns) != len(leaves) {
			return t.fail(-1, "row group %d has %d column chunks for the schema's %d columns", g, len(rg.Columns), len(leaves))
		}
		for c := range rg.Columns {
			if err := t.checkChunk(g, rg, c, leaves[c], pagesEnd); err != nil {
				return err
			}
		}
	}
	if rows != md.NumRows {
		return t.fail(-1, "its row groups hold %d rows, its footer says %d", rows, md.NumRows)
	}
	return nil
}

// checkChunk checks column c of row group g (see checkLayout).
func (t *table) checkChunk(g int, rg *format.RowGroup, c int, path []string, pagesEnd int64) error {
	cm := &rg.Columns[c].MetaData
	name := strings.Join(path, ".")
	fail := func(format string, args ...any) error {
		return t.fail(-1, "column %s, row group %d: %s", name, g, fmt.Sprintf(format, args...))
	}
	leaf, ok := t.pf.Schema().Lookup(path...)
	if ok && leaf.MaxRepetitionLevel == 0 && cm.NumValues != rg.NumRows {
		return fail("%d values for %d rows", cm.NumValues, rg.NumRows)
	}
	start := cm.DataPageOffset
	if cm.DictionaryPageOffset > 0 && cm.DictionaryPageOffset < start {
		start = cm.DictionaryPageOffset
	}
	if start < 4 || cm.TotalCompressedSize < 0 || cm.TotalCompressedSize > pagesEnd-start {
		return fail("its %d bytes at byte %d are not within the file's pages (bytes 4 to %d)", cm.TotalCompressedSize, start, pagesEnd)
	}
	end := start + cm.TotalCompressedSize
	var values int64
	for pos := start; pos < end; {
		h, n, err := t.pageHeader(pos, end)
		if err != nil {
			return fail("the page header at byte %d: %v", pos, err)
		}
		if h.CompressedPageSize < 0 || h.UncompressedPageSize < 0 || int64(h.CompressedPageSize) > end-pos-n {
			return fail("the page at byte %d declares %d bytes (%d uncompressed); %d are left in the chunk", pos, h.CompressedPageSize, h.UncompressedPageSize, end-pos-n)
		}
		if err := t.checkSize(cm.Codec, h, pos+n); err != nil {
			return fail("the page at byte %d: %v", pos, err)
		}
		var v int64
		switch {
		case h.Type == format.DictionaryPage && h.DictionaryPageHeader.Valid:
			if d := int64(h.DictionaryPageHeader.V.NumValues); d < 0 || d > cm.NumValues {
				return fail("the dictionary page at byte %d declares %d values for a chunk of %d", pos, d, cm.NumValues)
			}
		case h.Type == format.DataPage && h.DataPageHeader.Valid:
			v = int64(h.DataPageHeader.V.NumValues)
		case h.Type == format.DataPageV2 && h.DataPageHeaderV2.Valid:
			v = int64(h.DataPageHeaderV2.V.NumValues)
		}
		if v < 0 || v > cm.NumValues-values {
			return fail("the page at byte %d declares %d values; the chunk has %d, %d of them in the pages before", pos, v, cm.NumValues, values)
		}
		values += v
		pos += n + int64(h.CompressedPageSize)
	}
	if values != cm.NumValues {
		return fail("its pages hold %d values, the footer says %d", values, cm.NumValues)
	}
	return nil
}

// pageHeader decodes the page header at byte pos of the table's file,
// which must end before end, and returns it with its length. Headers are
// small, but their statistics hold a page's least and greatest values,
// so the read grows until the header fits.
func (t *table) pageHeader(pos, end int64) (*format.PageHeader, int64, error) {
	var proto thrift.CompactProtocol
	for n := min(int64(512), end-pos); ; n = min(4*n, end-pos) {
		buf := make([]byte, n)
		if _, err := t.f.ReadAt(buf, pos); err != nil && err != io.EOF {
			return nil, 0, err
		}
		r := proto.NewReaderFromBytes(buf)
		h := new(format.PageHeader)
		err := thrift.NewDecoder(r).Decode(h)
		if err == nil {
			return h, int64(r.BytesRead()), nil
		}
		if n == end-pos {
			return nil, 0, err
		}
	}
}

// maxRatio is the most a page of each codec can expand: a zstd block of
// 4 bytes (a 3-byte header and one byte repeated) makes at most 128 KB;
// a deflate stream at most 1032 times its size; an LZ4 sequence about
// 255 times; snappy's longest copy, 64 bytes, takes 2 bytes. A page that
// declares more than this was not written by the codec. Brotli has no
// such small bound and is not checked.
var maxRatio = map[format.CompressionCodec]int64{
	format.Uncompressed: 1, format.Zstd: 32768, format.Gzip: 1100, format.Lz4: 256, format.Lz4Raw: 256, format.Snappy: 33,
}

// checkSize checks a page's declared uncompressed size against its
// compressed size and, for zstd, against the size its frame declares:
// parquet-go allocates the declared size before decompressing.
func (t *table) checkSize(codec format.CompressionCodec, h *format.PageHeader, data int64) error {
	c, u := int64(h.CompressedPageSize), int64(h.UncompressedPageSize)
	if r, ok := maxRatio[codec]; ok && u > r*c+64 {
		return fmt.Errorf("%d bytes declared uncompressed from %d compressed with %v, which expands at most %d times", u, c, codec, r)
	}
	if codec != format.Zstd {
		return nil
	}
	switch {
	case h.Type == format.DataPageV2 && h.DataPageHeaderV2.Valid:
		v2 := &h.DataPageHeaderV2.V
		if v2.IsCompressed.Valid && !v2.IsCompressed.V {
			return nil
		}
		levels := int64(v2.RepetitionLevelsByteLength) + int64(v2.DefinitionLevelsByteLength)
		data, c, u = data+levels, c-levels, u-levels
	case h.Type != format.DataPage && h.Type != format.DictionaryPage:
		return nil
	}
	if c <= 0 {
		return nil
	}
	head := make([]byte, min(c, 18))
	if _, err := t.f.ReadAt(head, data); err != nil {
		return err
	}
	if fcs, ok := zstdContentSize(head); ok && fcs != uint64(u) {
		return fmt.Errorf("%d bytes declared uncompressed, but its zstd frame holds %d", u, fcs)
	}
	return nil
}

// zstdContentSize reads the content size a zstd frame header declares
// (RFC 8878, 3.1.1.1), ok false when the frame does not declare it.
func zstdContentSize(b []byte) (uint64, bool) {
	if len(b) < 5 || binary.LittleEndian.Uint32(b) != 0xfd2fb528 {
		return 0, false
	}
	d := b[4]
	single := d>>5&1 == 1
	pos := 5
	if !single {
		pos++ // Window_Descriptor
	}
	pos += []int{0, 1, 2, 4}[d&3] // Dictionary_ID
	size := []int{0, 2, 4, 8}[d>>6]
	if size == 0 && single {
		size = 1
	}
	if size == 0 || len(b) < pos+size {
		return 0, false
	}
	f := b[pos : pos+size]
	switch size {
	case 1:
		return uint64(f[0]), true
	case 2:
		return uint64(binary.LittleEndian.Uint16(f)) + 256, true
	case 4:
		return uint64(binary.LittleEndian.Uint32(f)), true
	}
	return binary.LittleEndian.Uint64(f), true
}
