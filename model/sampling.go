package model

// SamplingProfile is one sampling heap profile (formats/heapprofile reads
// them): not a heap graph but the call tree of allocation stacks with the
// bytes sampled at each frame, and the samples themselves.
type SamplingProfile struct {
	// Nodes is the allocation call tree in preorder: Nodes[0] is the root
	// ("(root)"), and each node's Parent comes before it.
	Nodes []ProfileNode
	// Samples are the sampled allocations, in file order.
	Samples []ProfileSample
}

// ProfileNode is one frame of a SamplingProfile's allocation call tree.
type ProfileNode struct {
	// ID is the node's id in the file, which samples refer to.
	ID uint32
	// Parent is the index in SamplingProfile.Nodes of the caller, -1 for the root.
	Parent int32
	// Function is the function name ("" for an anonymous function).
	Function string
	// URL is the script's URL or path ("" for native code).
	URL string
	// ScriptID is V8's script id, as the file spells it.
	ScriptID string
	// Line and Column are zero-based, as V8 writes them; -1 when unknown.
	Line, Column int32
	// SelfSize is the bytes allocated at this frame itself, as V8 scales
	// the samples up to estimate every allocation.
	SelfSize uint64
}

// ProfileSample is one sampled allocation of a SamplingProfile.
type ProfileSample struct {
	// Size is the sampled object's size in bytes.
	Size uint64
	// Node is the index in SamplingProfile.Nodes of the frame that allocated it,
	// or -1 when the call tree has no node of the sample's id: Node v20's
	// --heap-prof writes samples of a node the tree it wrote before them
	// lacks (one id past the last, about 3% of the samples in the fixtures).
	Node int32
	// Ordinal orders samples by allocation time.
	Ordinal uint64
}
