package model

// Scripts are the scripts a V8 program had loaded when its dump was
// taken, as its inspector reported them (DevTools protocol:
// Debugger.scriptParsed), which heapx capture keeps in a side file
// beside the dump (formats/v8 reads it with the dump). A snapshot names
// most scripts itself, through its Script objects; the side file also
// names those it does not reach and gives each one's source map.
type Scripts struct {
	// File is the side file's path.
	File string
	// List holds the scripts in the order the inspector reported them.
	List []Script
	// Err says why the side file could not be read: the dump is read
	// without it, and the views that name scripts fall back on the
	// snapshot's own names.
	Err error
}

// Script is one script of a V8 program.
type Script struct {
	// ID is V8's script id, the script_id of the snapshot's locations.
	ID uint32
	// URL is the script's name: a file path or URL ("/srv/app.js",
	// "file:///srv/app.mjs", "https://example.com/main.js",
	// "node:internal/timers"); "" for an anonymous one (eval).
	URL string
	// SourceMapURL is the script's source map as its
	// //# sourceMappingURL comment gives it (relative to URL, or a data:
	// URL), "" for none.
	SourceMapURL string
	// Hash is the inspector's hash of the script's source.
	Hash string
	// StartLine and StartColumn place the script in its resource,
	// zero-based (an inline script of a page starts where its tag does).
	StartLine, StartColumn int32
	// Length is the script's length in UTF-16 code units.
	Length int64
	// Module says the script is an ECMAScript module.
	Module bool
}
