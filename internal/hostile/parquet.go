package hostile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/heapx/heapx/formats/parquet"
)

// A Parquet file is pages (each a Thrift header and its bytes), then the
// footer (a Thrift FileMetaData), its length and "PAR1". The functions
// below take a real file apart and put it back with one thing changed:
// a page header, a page's bytes or the footer, every offset after a change
// of length moved with it, so that the rest of the file stays valid and
// the reader meets exactly the lie.

var compact thrift.CompactProtocol

// parquetFooter splits a Parquet file into its body and decoded footer.
func parquetFooter(b []byte) ([]byte, *format.FileMetaData, error) {
	if len(b) < 12 || string(b[len(b)-4:]) != "PAR1" {
		return nil, nil, fmt.Errorf("not a Parquet file")
	}
	n := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	if n > len(b)-12 {
		return nil, nil, fmt.Errorf("footer of %d bytes in a file of %d", n, len(b))
	}
	var md format.FileMetaData
	if err := thrift.Unmarshal(&compact, b[len(b)-8-n:len(b)-8], &md); err != nil {
		return nil, nil, err
	}
	return b[:len(b)-8-n], &md, nil
}

// withFooter appends the encoded footer md to body.
func withFooter(body []byte, md *format.FileMetaData) ([]byte, error) {
	f, err := thrift.Marshal(&compact, md)
	if err != nil {
		return nil, err
	}
	out := append(slices.Clip(body), f...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(f)))
	return append(out, "PAR1"...), nil
}

// ParquetEditFooter returns the Parquet file b with its footer changed by
// edit (row counts, the schema, key-value metadata...).
func ParquetEditFooter(b []byte, edit func(*format.FileMetaData)) ([]byte, error) {
	body, md, err := parquetFooter(b)
	if err != nil {
		return nil, err
	}
	edit(md)
	return withFooter(body, md)
}

// ParquetPage locates page `page` (0-based, in file order: a dictionary
// page first) of leaf column `column` (its dotted path) in the first row
// group of b: where its header starts, the header's length, and the
// decoded header.
func ParquetPage(b []byte, column string, page int) (off, hlen int, h *format.PageHeader, err error) {
	_, md, err := parquetFooter(b)
	if err != nil {
		return 0, 0, nil, err
	}
	if len(md.RowGroups) == 0 {
		return 0, 0, nil, fmt.Errorf("no row groups")
	}
	for _, c := range md.RowGroups[0].Columns {
		cm := c.MetaData
		if strings.Join(cm.PathInSchema, ".") != column {
			continue
		}
		pos := cm.DataPageOffset
		if cm.DictionaryPageOffset > 0 && cm.DictionaryPageOffset < pos {
			pos = cm.DictionaryPageOffset
		}
		end := pos + cm.TotalCompressedSize
		for i := 0; pos < end; i++ {
			r := compact.NewReaderFromBytes(b[pos:end])
			var ph format.PageHeader
			if err := thrift.NewDecoder(r).Decode(&ph); err != nil {
				return 0, 0, nil, fmt.Errorf("page %d of %s: %w", i, column, err)
			}
			if i == page {
				return int(pos), r.BytesRead(), &ph, nil
			}
			pos += int64(r.BytesRead()) + int64(ph.CompressedPageSize)
		}
		return 0, 0, nil, fmt.Errorf("column %s has fewer than %d pages", column, page+1)
	}
	return 0, 0, nil, fmt.Errorf("no column %s", column)
}

// ParquetEditPage returns b with the header of page `page` of column
// `column` (see ParquetPage) changed by edit, re-encoded, and the
// footer's offsets past it moved by the change in its length.
func ParquetEditPage(b []byte, column string, page int, edit func(*format.PageHeader)) ([]byte, error) {
	off, hlen, h, err := ParquetPage(b, column, page)
	if err != nil {
		return nil, err
	}
	edit(h)
	nh, err := thrift.Marshal(&compact, h)
	if err != nil {
		return nil, err
	}
	return splice(b, off, hlen, nh)
}

// ParquetPageBody returns the offset and length of the bytes of page
// `page` of column `column` (after its header).
func ParquetPageBody(b []byte, column string, page int) (off, n int, err error) {
	off, hlen, h, err := ParquetPage(b, column, page)
	if err != nil {
		return 0, 0, err
	}
	return off + hlen, int(h.CompressedPageSize), nil
}

// splice replaces b[off:off+n] with repl and moves every offset of the
// footer past off by the change in length (growing the chunk that holds
// off).
func splice(b []byte, off, n int, repl []byte) ([]byte, error) {
	body, md, err := parquetFooter(b)
	if err != nil {
		return nil, err
	}
	d := int64(len(repl) - n)
	move := func(p *int64) {
		if *p > int64(off) {
			*p += d
		}
	}
	for i := range md.RowGroups {
		rg := &md.RowGroups[i]
		move(&rg.FileOffset)
		for j := range rg.Columns {
			c := &rg.Columns[j]
			cm := &c.MetaData
			start := cm.DataPageOffset
			if cm.DictionaryPageOffset > 0 && cm.DictionaryPageOffset < start {
				start = cm.DictionaryPageOffset
			}
			if int64(off) >= start && int64(off) < start+cm.TotalCompressedSize {
				cm.TotalCompressedSize += d
				cm.TotalUncompressedSize += d
				rg.TotalCompressedSize += d
			}
			move(&c.FileOffset)
			move(&cm.DataPageOffset)
			move(&cm.DictionaryPageOffset)
			move(&cm.IndexPageOffset)
			move(&cm.BloomFilterOffset)
			move(&c.OffsetIndexOffset)
			move(&c.ColumnIndexOffset)
		}
	}
	var nb bytes.Buffer
	nb.Write(body[:off])
	nb.Write(repl)
	nb.Write(body[off+n:])
	return withFooter(nb.Bytes(), md)
}

// ParquetTable writes rows as a Parquet file as heapx's writer does
// (zstd, version-1 data pages), for tables of a schema heapx does not
// write: a column of the wrong type, a missing one, a dictionary where
// heapx writes plain values.
func ParquetTable[T any](rows []T) ([]byte, error) {
	var b bytes.Buffer
	w := pq.NewGenericWriter[T](&b, pq.Compression(&pq.Zstd), pq.DataPageVersion(1),
		pq.KeyValueMetadata("heapx:parquet_version", "1"))
	if _, err := w.Write(rows); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ParquetCase is one crafted partition: heapx's partition with the files
// of Tables (by table name) replaced; Want is what the reader's error
// must say.
type ParquetCase struct {
	Name   string
	Tables map[string][]byte
	Want   string
}

// ParquetCases crafts, from the partition src that heapx wrote, a
// partition for each lie a Parquet file can tell its reader: a page of
// garbage, page headers declaring 2 GB, 2^31 values or a dictionary of
// 2^31 entries, a footer declaring 4 GB or 2^31 rows (with the dumps row
// agreeing), a file cut in half, and a column of the wrong type.
func ParquetCases(src string) ([]ParquetCase, error) {
	read := func(table string) ([]byte, error) { return os.ReadFile(parquet.TableFile(src, table)) }
	page := func(table, column string, edit func(*format.PageHeader)) func() ([]byte, error) {
		return func() ([]byte, error) {
			b, err := read(table)
			if err != nil {
				return nil, err
			}
			return ParquetEditPage(b, column, 0, edit)
		}
	}
	type table struct {
		name string
		make func() ([]byte, error)
	}
	specs := []struct {
		name, want string
		tables     []table
	}{
		{"pq-page-garbage", `column target: crc32 checksum mismatch`, []table{{parquet.TableReferences, func() ([]byte, error) {
			b, err := read(parquet.TableReferences)
			if err != nil {
				return nil, err
			}
			off, n, err := ParquetPageBody(b, "target", 0)
			if err != nil {
				return nil, err
			}
			for i := off + n/2; i < off+n/2+64 && i < off+n; i++ {
				b[i] ^= 0xa5
			}
			return b, nil
		}}}},
		{"pq-compressed-2g", "declares 2147483647 bytes", []table{{parquet.TableObjects,
			page(parquet.TableObjects, "node_id", func(h *format.PageHeader) { h.CompressedPageSize = 1<<31 - 1 })}}},
		{"pq-uncompressed-2g", "2147483647 bytes declared uncompressed, but its zstd frame holds", []table{{parquet.TableReferences,
			page(parquet.TableReferences, "target", func(h *format.PageHeader) { h.UncompressedPageSize = 1<<31 - 1 })}}},
		{"pq-values-2g", "declares 2147483647 values", []table{{parquet.TableReferences,
			page(parquet.TableReferences, "target", func(h *format.PageHeader) { h.DataPageHeader.V.NumValues = 1<<31 - 1 })}}},
		{"pq-dict-2g", "the dictionary page at byte", []table{{parquet.TableStrings, func() ([]byte, error) {
			rows, err := parquet.ReadTable[parquet.StringRow](src, parquet.TableStrings, true)
			if err != nil {
				return nil, err
			}
			b, err := dictStrings(rows)
			if err != nil {
				return nil, err
			}
			return ParquetEditPage(b, "text", 0, func(h *format.PageHeader) { h.DictionaryPageHeader.V.NumValues = 1<<31 - 1 })
		}}}},
		{"pq-footer-4g", "its footer declares 4294967280 bytes", []table{{parquet.TableObjects, func() ([]byte, error) {
			b, err := read(parquet.TableObjects)
			if err == nil {
				copy(b[len(b)-8:], []byte{0xf0, 0xff, 0xff, 0xff})
			}
			return b, err
		}}}},
		{"pq-truncated", `it does not end with the Parquet magic "PAR1"`, []table{{parquet.TableReferences, func() ([]byte, error) {
			b, err := read(parquet.TableReferences)
			return b[:len(b)/2], err
		}}}},
		{"pq-rows-2g", "values for 2147483646 rows", []table{{parquet.TableObjects, func() ([]byte, error) {
			b, err := read(parquet.TableObjects)
			if err != nil {
				return nil, err
			}
			return ParquetEditFooter(b, func(md *format.FileMetaData) {
				md.NumRows = 1<<31 - 2
				md.RowGroups[0].NumRows = 1<<31 - 2
			})
		}}, {parquet.TableDumps, func() ([]byte, error) {
			rows, err := parquet.ReadTable[parquet.DumpRow](src, parquet.TableDumps, true)
			if err != nil {
				return nil, err
			}
			rows[0].NodeCount = 1<<31 - 2
			return ParquetTable(rows)
		}}}},
		{"pq-wrong-type", "column node_id is BYTE_ARRAY, want INT64", []table{{parquet.TableObjects, func() ([]byte, error) {
			rows, err := parquet.ReadTable[parquet.ObjectRow](src, parquet.TableObjects, true)
			if err != nil {
				return nil, err
			}
			type row struct {
				NodeID string `parquet:"node_id"`
			}
			return ParquetTable(make([]row, len(rows)))
		}}}},
	}
	var out []ParquetCase
	for _, s := range specs {
		c := ParquetCase{Name: s.name, Want: s.want, Tables: map[string][]byte{}}
		for _, t := range s.tables {
			b, err := t.make()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.name, err)
			}
			c.Tables[t.name] = b
		}
		out = append(out, c)
	}
	return out, nil
}

// dictStrings writes a strings table whose text column is
// dictionary-encoded (heapx writes it plain).
func dictStrings(rows []parquet.StringRow) ([]byte, error) {
	type row struct {
		DumpID string `parquet:"dump_id,dict"`
		ID     int64  `parquet:"id,delta"`
		Text   string `parquet:"text,dict"`
	}
	out := make([]row, len(rows))
	for i, r := range rows {
		out[i] = row{DumpID: r.DumpID, ID: r.ID, Text: r.Text}
	}
	return ParquetTable(out)
}

// WriteParquetCase writes c into a new partition directory dst: the
// files of partition src, with c's tables replaced.
func WriteParquetCase(src, dst string, c ParquetCase) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		name := e.Name()
		b, ok := c.Tables[strings.TrimSuffix(name, ".parquet")]
		if !ok {
			if b, err = os.ReadFile(filepath.Join(src, name)); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
