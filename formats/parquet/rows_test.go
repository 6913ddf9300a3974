package parquet_test

import (
	"io"
	"os"

	pq "github.com/parquet-go/parquet-go"
)

// readRows reads a whole table file as row structs, as a program using
// the schema would.
func readRows[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := pq.NewGenericReader[T](f)
	defer r.Close()
	rows := make([]T, r.NumRows())
	n, err := r.Read(rows)
	if err != nil && err != io.EOF {
		return nil, err
	}
	return rows[:n], nil
}
