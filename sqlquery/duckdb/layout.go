//go:build duckdb

package duckdb

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/heapx/heapx/formats/parquet"
)

// tables are the tables of the Parquet form, in the order heapx sql
// lists them: each is a view when a partition of the directory has it.
var tables = []string{parquet.TableDumps, parquet.TableObjects, parquet.TableReferences, parquet.TableStrings,
	parquet.TableClasses, parquet.TableSuspects, parquet.TableLeaks, parquet.TableLabels, parquet.TableLocations,
	parquet.TableTraceFunctions, parquet.TableTraceNodes, parquet.TableSamples, parquet.TableSections,
	parquet.TableGCRoots}

// Layout is what a Parquet directory holds: its partitions and which
// tables they have.
type Layout struct {
	// Dir is the directory, absolute.
	Dir string
	// Partitions are the dump=<id> directories, by name; "." when Dir is
	// itself one partition.
	Partitions []string
	// Has says which tables at least one partition has.
	Has map[string]bool
}

// ReadLayout lists the partitions of dir (hidden directories, and those
// whose name does not start with dump=, are not partitions), and which
// tables they hold; dir may also be one partition (DIR/dump=<id>). A
// directory without any partition is an error that says how one is
// made.
func ReadLayout(dir string) (*Layout, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, err
	}
	lay := &Layout{Dir: abs, Has: map[string]bool{}}
	parts := []string{}
	if _, err := os.Stat(parquet.TableFile(abs, parquet.TableDumps)); err == nil {
		parts = append(parts, ".")
	} else {
		for _, e := range entries {
			if e.IsDir() && strings.HasPrefix(e.Name(), parquet.PartitionPrefix) {
				parts = append(parts, e.Name())
			}
		}
	}
	for _, p := range parts {
		lay.Partitions = append(lay.Partitions, p)
		for _, t := range tables {
			if !lay.Has[t] {
				if _, err := os.Stat(parquet.TableFile(filepath.Join(abs, p), t)); err == nil {
					lay.Has[t] = true
				}
			}
		}
	}
	if len(lay.Partitions) == 0 {
		return nil, fmt.Errorf("%s: no %s<id> directory in it: not a directory of heapx's Parquet form (heapx export --parquet %s DUMP... makes one)",
			dir, parquet.PartitionPrefix, dir)
	}
	sort.Strings(lay.Partitions)
	if !lay.Has[parquet.TableDumps] {
		return nil, fmt.Errorf("%s: no partition has %s.parquet: not a directory of heapx's Parquet form", dir, parquet.TableDumps)
	}
	return lay, nil
}

// tableNames are the tables that are views, in tables' order.
func (l *Layout) tableNames() []string {
	var names []string
	for _, t := range tables {
		if l.Has[t] {
			names = append(names, t)
		}
	}
	return names
}

// settings shut the connection in: no file outside the directory, no
// network, no extension to install or load, and no setting changed
// after.
func (l *Layout) settings() []string {
	return []string{
		"SET allowed_directories = [" + literal(l.Dir+string(filepath.Separator)) + "]",
		"SET enable_external_access = false",
		"SET autoinstall_known_extensions = false",
		"SET autoload_known_extensions = false",
		"SET lock_configuration = true",
	}
}

// view is the SQL that makes table's view over its files in every
// partition.
func (l *Layout) view(table string) string {
	glob := filepath.Join(l.Dir, parquet.PartitionPrefix+"*", table+".parquet")
	if len(l.Partitions) == 1 && l.Partitions[0] == "." {
		glob = parquet.TableFile(l.Dir, table)
	}
	// union_by_name: a newer writer's added columns read as NULL in
	// older partitions instead of failing the scan.
	return fmt.Sprintf(`CREATE VIEW %q AS SELECT * FROM read_parquet(%s, hive_partitioning = true, union_by_name = true)`,
		table, literal(glob))
}

// literal quotes s as an SQL string literal.
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
