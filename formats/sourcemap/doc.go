// Package sourcemap reads source maps (ECMA-426, the "version 3" format
// every JavaScript bundler and minifier writes) and answers where a
// position of generated code came from: the original file, line, column
// and name. heapx uses it to print a minified bundle's locations
// (bundle.js:1:7324) as the sources they were built from
// (src/ledger.js:23:18), and a minifier's names (t) as the program's
// (LedgerRow).
//
// Parse reads a plain map or an index map (sections of plain maps at
// offsets), with sources resolved against the map's own path or URL
// (sourceRoot first), sourcesContent and the ignore list. Map.Lookup
// finds the mapping at or before a generated position on its line, as
// Mozilla's source-map library and browsers do; the tests compare it
// with Mozilla's answers at every position of real bundles' maps.
// LinkedURL finds the map a script names in its trailing
// //# sourceMappingURL= comment, and DataURL decodes a map inlined as a
// data: URL.
//
// A large bundle's map is 10 MB or more, most of it one long mappings
// string and the sources' contents. Parse reads the JSON in place: the
// mappings stay a slice of the input, the contents are found by offset
// and decoded only when asked for, and the mappings are checked once and
// indexed by checkpoints (see index), not decoded into a struct per
// segment. On a 10 MB map it takes about 40 ms and allocates 1.5 MB
// beside the input, against 78 ms and 45 MB (35 MB kept) for
// github.com/go-sourcemap/sourcemap, which also panics on a segment whose
// source index is out of range: why this package is hand-written.
//
// Bad input is an error, never a panic: a *formats.FormatError naming the
// map, the field and the byte offset. What the format says a reader may
// tolerate (a field of the wrong type, another version number) is read
// as missing and listed in Map.Warnings.
package sourcemap
