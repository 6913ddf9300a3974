package analysis

// SetPackLimit sets the node count below which the dominator pass packs
// predecessors in three bytes, and returns a function restoring it.
func SetPackLimit(n int32) (restore func()) {
	old := packLimit
	packLimit = n
	return func() { packLimit = old }
}
