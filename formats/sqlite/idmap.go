package sqlite

import "sort"

// idIndex maps the ids of a table read in ascending id order (stringid, nodetypeid,
// edgetypeid) to their positions. heapx writes them 0, 1, 2, ..., which
// is recognized and costs nothing; other files get a binary search over
// the sorted ids.
type idIndex struct {
	dense bool    // ids are exactly 0..n-1
	ids   []int64 // sorted, when not dense
	n     int
}

func newIDIndex(ids []int64) idIndex {
	dense := true
	for i, id := range ids {
		if id != int64(i) {
			dense = false
			break
		}
	}
	if dense {
		return idIndex{dense: true, n: len(ids)}
	}
	// The reader selects them ORDER BY id, so position i holds the i-th
	// smallest and positions are the model's indexes.
	return idIndex{ids: append([]int64(nil), ids...), n: len(ids)}
}

// find returns the position of id, or -1.
func (x *idIndex) find(id int64) int {
	if x.dense {
		if id >= 0 && id < int64(x.n) {
			return int(id)
		}
		return -1
	}
	i := sort.Search(len(x.ids), func(i int) bool { return x.ids[i] >= id })
	if i < len(x.ids) && x.ids[i] == id {
		return i
	}
	return -1
}
