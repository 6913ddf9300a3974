package main

import (
	"os"
	"path/filepath"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/parquet"
	"github.com/heapx/heapx/internal/hostile"
)

// pqID is the dump id of every crafted partition.
const pqID = "0123456789abcdef"

// parquetCases writes pq-base/, testdata/node-basic as heapx export
// writes it, and for each crafted partition of hostile.ParquetCases a
// directory pq-NAME/ holding it.
func parquetCases(dir string) error {
	g, _, err := formats.Open(filepath.Join("testdata", "node-basic.heapsnapshot.gz"), formats.ReadOptions{})
	if err != nil {
		return err
	}
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		return err
	}
	base := filepath.Join(dir, "pq-base")
	if err := os.RemoveAll(base); err != nil {
		return err
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return err
	}
	d := &parquet.Dump{Graph: g, Results: a.Results(), ClassOf: a.Classes.Of, ClassNames: a.Classes.Names,
		Info: parquet.DumpRow{DumpID: pqID, TotalSize: int64(a.TotalSize())}}
	src, err := parquet.WritePartition(base, d)
	if err != nil {
		return err
	}
	cases, err := hostile.ParquetCases(src)
	if err != nil {
		return err
	}
	for _, c := range cases {
		if err := os.RemoveAll(filepath.Join(dir, c.Name)); err != nil {
			return err
		}
		if err := hostile.WriteParquetCase(src, parquet.PartitionDir(filepath.Join(dir, c.Name), pqID), c); err != nil {
			return err
		}
	}
	return nil
}
