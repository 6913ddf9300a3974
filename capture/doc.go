// Package capture takes heap dumps of live programs, as the DevTools
// Memory panel and memlab do, for heapx to read: heap snapshots, series
// of them, allocation timelines and sampling heap profiles of V8 targets
// (a Node.js process with its inspector on, one heapx starts, a Chrome
// page) over the DevTools protocol (package cdp), and heap dumps of a
// JVM through the JDK's jcmd. Run, with Options saying what, from which
// target and where, is the one entry point; the types beneath it (V8,
// Process, Series) are its parts.
//
// Every file is written as it streams in, never whole in memory, to a
// temporary file renamed into place when complete (formats.WriteFileAtomic),
// gzip-compressed when its name ends in ".gz". Whatever ends a capture
// early (its context, the target's exit, a lost connection, a timeout),
// allocation tracking and sampling are stopped in the target when it is
// still there, and no partial file is left. A program Run started that
// ends first ends the capture with a *ProgramExit: how it ended, its last
// words on stderr, what was kept. docs/capture.md says it for users.
package capture
