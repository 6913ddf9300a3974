// Package alloc answers where memory was allocated: the allocation sites
// of the live objects of a dump with allocation stacks (AllocationSites,
// DevTools' Allocation view; AllocationStack of one object), an
// allocation timeline's buckets, live heap and ages (Timeline), the
// functions whose allocations died (AllocationChurn), sites counted over a
// series (SitesOverSeries) and the views of a sampling heap profile
// (ProfileSites, ProfileBottomUp).
//
// It builds on the graph core (package analysis) and reads profiles as
// model data (model.SamplingProfile), never a file.
package alloc
