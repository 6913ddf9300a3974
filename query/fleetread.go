package query

import (
	"fmt"
	"os"

	"github.com/heapx/heapx/formats/parquet"
)

// ReadFleet reads what the fleet views need of the Parquet directory dir
// that heapx export --parquet wrote (or of dir itself, one partition): the
// small tables of every partition, its dumps, classes and suspects rows.
// No dump is read again. The partitions are checked as every reader of the
// form checks them (parquet.Scan: one format version, complete
// partitions), and each table's rows must be of its partition's dump.
func ReadFleet(dir string) (f *Fleet, err error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory: heapx fleet reads a directory that heapx export --parquet wrote", dir)
	}
	var parts []string
	if _, err := os.Stat(parquet.TableFile(dir, parquet.TableDumps)); err == nil {
		parts = []string{dir}
	} else {
		ps, err := parquet.Scan(dir)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			parts = append(parts, p.Path)
		}
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("%s: no %s<id> directory in it: not a directory of heapx's Parquet form (heapx export --parquet %s DUMP... makes one)",
			dir, parquet.PartitionPrefix, dir)
	}
	f = &Fleet{}
	for _, p := range parts {
		dumps, err := parquet.ReadTable[parquet.DumpRow](p, parquet.TableDumps, true)
		if err != nil {
			return nil, err
		}
		if len(dumps) != 1 {
			return nil, fmt.Errorf("%s: %d rows, want one (the dump)", parquet.TableFile(p, parquet.TableDumps), len(dumps))
		}
		if v := dumps[0].FormatVersion; v != parquet.FormatVersion {
			return nil, fmt.Errorf("%s: format_version is %d; this heapx reads version %d", parquet.TableFile(p, parquet.TableDumps), v, parquet.FormatVersion)
		}
		classes, err := parquet.ReadTable[parquet.ClassRow](p, parquet.TableClasses, false)
		if err != nil {
			return nil, err
		}
		suspects, err := parquet.ReadTable[parquet.SuspectRow](p, parquet.TableSuspects, false)
		if err != nil {
			return nil, err
		}
		id := dumps[0].DumpID
		for i := range classes {
			if classes[i].DumpID != id {
				return nil, fmt.Errorf("%s: row %d is of dump %s, not of the partition's %s", parquet.TableFile(p, parquet.TableClasses), i, classes[i].DumpID, id)
			}
		}
		for i := range suspects {
			if suspects[i].DumpID != id {
				return nil, fmt.Errorf("%s: row %d is of dump %s, not of the partition's %s", parquet.TableFile(p, parquet.TableSuspects), i, suspects[i].DumpID, id)
			}
		}
		f.Dumps = append(f.Dumps, dumps[0])
		f.Classes = append(f.Classes, classes...)
		f.Suspects = append(f.Suspects, suspects...)
	}
	return f, nil
}
