package model

// HeapStats are V8's heap statistics updates recorded with an allocation
// timeline, which heapx capture --timeline keeps in a side file beside it
// (formats/v8 reads it with the timeline).
type HeapStats struct {
	// File is the side file's path.
	File string
	// Updates are its updates, in order.
	Updates []HeapStatsUpdate
	// Err says why the side file could not be read: the views that need
	// the updates report it, the others read the timeline without them.
	Err error
}

// HeapStatsUpdate is one of the updates V8 sends while it tracks
// allocations (DevTools protocol: HeapProfiler.heapStatsUpdate events,
// then one lastSeenObjectId), about every 50 ms: after a full garbage
// collection, the live count and size of the objects of each object id
// interval whose numbers changed. Interval k holds the objects numbered
// between the k-1st and the kth update (interval 0: those from before
// tracking started), so the sum over all intervals after an update is
// the number of live objects V8 tracks at that moment, which a
// .heaptimeline does not keep.
type HeapStatsUpdate struct {
	// TimestampMillis is V8's wall clock at the update, in milliseconds
	// since the Unix epoch.
	TimestampMillis float64
	// LastSeenID is the last object id V8 had assigned.
	LastSeenID uint64
	// Intervals are the id intervals whose numbers changed.
	Intervals []IntervalStats
}

// IntervalStats is one object id interval's live objects at an update.
type IntervalStats struct {
	Index uint32
	Count uint32
	Size  uint64
}
