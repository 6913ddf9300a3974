package parquet

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ContentID returns the dump id of the file at path and the hex SHA-256
// of its bytes, of which the id is the first 16 digits
// (docs/format.md 10.1). The file is read once, in 1 MiB pieces.
func ContentID(path string) (id, sum string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyBuffer(h, f, make([]byte, 1<<20)); err != nil {
		return "", "", fmt.Errorf("%s: %w", path, err)
	}
	sum = hex.EncodeToString(h.Sum(nil))
	return sum[:16], sum, nil
}

// Partition is one dump's partition of a directory.
type Partition struct {
	Path string // dir/dump=<id>
	ID   string
	// Version is its dumps.format_version.
	Version int32
}

// Scan lists the partitions of the Parquet directory dir, by id, with
// their format versions, and fails when they have different versions,
// naming a partition of each: a query over all of them could mix
// schemas. A partition without a readable dumps.parquet is an error too
// (a partition is complete or absent: something else wrote it or damaged
// it). Hidden entries (temporary directories of an export) and other
// files are not partitions.
func Scan(dir string) ([]Partition, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var parts []Partition
	for _, e := range ents {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, PartitionPrefix) {
			continue
		}
		p := Partition{Path: filepath.Join(dir, name), ID: strings.TrimPrefix(name, PartitionPrefix)}
		t, err := openTable(p.Path, TableDumps, true)
		if err != nil {
			return nil, err
		}
		id, version, err := t.identity()
		t.close()
		if err != nil {
			return nil, err
		}
		if id != p.ID {
			return nil, fmt.Errorf("%s: dumps.parquet is of dump %q, not of %s as the directory's name says", p.Path, id, p.ID)
		}
		p.Version = version
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].ID < parts[j].ID })
	for _, p := range parts {
		if p.Version != parts[0].Version {
			return nil, fmt.Errorf("%s: mixed format versions: %s is version %d, %s version %d; export the dumps again into one directory of one version",
				dir, parts[0].Path, parts[0].Version, p.Path, p.Version)
		}
	}
	if len(parts) > 0 && parts[0].Version != FormatVersion {
		return nil, fmt.Errorf("%s: partitions are of Parquet form version %d; this heapx reads and writes version %d", dir, parts[0].Version, FormatVersion)
	}
	return parts, nil
}

// Prepare readies dir for an export: it removes the temporary
// directories an interrupted export left, checks the partitions (Scan)
// and returns the ids of the dumps dir has.
func Prepare(dir string) (map[string]bool, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), tempPrefix) {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return nil, err
			}
		}
	}
	parts, err := Scan(dir)
	if err != nil {
		return nil, err
	}
	have := make(map[string]bool, len(parts))
	for _, p := range parts {
		have[p.ID] = true
	}
	return have, nil
}
