package progress

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	hx "github.com/heapx/heapx"
)

// TestNotATerminal checks that nothing is drawn on a file that is not a
// terminal, whatever is reported, and that every bar is removed.
func TestNotATerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	b := Start(f, "writing x", -1)
	b.Update(40, 100)
	if got, total := b.cur.Load(), b.total.Load(); got != 40 || total != 100 {
		t.Errorf("after Update(40, 100): done %d of %d", got, total)
	}
	b.Done()

	s := &Stages{W: f, Name: "app.heapsnapshot"}
	s.Set(hx.Reading, 10, 1000)
	first := s.bar
	if first.total.Load() != 1000 || first.cur.Load() != 10 {
		t.Errorf("reading: done %d of %d, want 10 of 1000", first.cur.Load(), first.total.Load())
	}
	s.Set(hx.Reading, 500, 2000) // HPROF's reader counts the file twice
	if s.bar != first || first.total.Load() != 2000 || first.cur.Load() != 500 {
		t.Errorf("a stage's later call made a new bar or lost its values (%d of %d)", first.cur.Load(), first.total.Load())
	}
	s.Set(hx.Analyzing, 0, -1)
	if s.bar == first || s.stage != hx.Analyzing || s.bar.total.Load() != -1 {
		t.Errorf("the analysis did not get a spinner of its own: stage %v, total %d", s.stage, s.bar.total.Load())
	}
	s.Done()
	if s.bar != nil {
		t.Error("Stages.Done left a bar")
	}
	s.Done() // twice is harmless

	p := &Phases{W: f}
	p.Set(1) // before any phase: nothing to set
	p.Phase("taking the snapshot", 100)
	p.Set(30)
	if p.bar.cur.Load() != 30 {
		t.Errorf("phase: done %d, want 30", p.bar.cur.Load())
	}
	p.Finish()
	p.Finish()
	if p.bar != nil {
		t.Error("Phases.Finish left a bar")
	}

	if st, err := f.Stat(); err != nil || st.Size() != 0 {
		t.Errorf("wrote %d bytes to a file that is not a terminal (%v)", st.Size(), err)
	}
}

// TestLastFrame checks that a frame ending in a line is known to be on
// the terminal, and one that only erases is not.
func TestLastFrame(t *testing.T) {
	var out bytes.Buffer
	f := &lastFrame{w: &out}
	f.Write([]byte("reading app 12%\n"))
	if !f.shown {
		t.Error("a bar's line is not known as shown")
	}
	f.Write([]byte(eraseLine))
	if f.shown {
		t.Error("an erased bar is known as shown")
	}
	f.Write(nil)
	if f.shown || out.String() != "reading app 12%\n"+eraseLine {
		t.Errorf("passed through %q", out.String())
	}
}
