package heapx

import "github.com/heapx/heapx/report"

// ReportInput is the dump as a report (report.Build) and a session take
// it: its path, its format's name and its analysis, computed here unless
// it was, without the Dump itself (its stored results, its reader's
// state), which a program that keeps many dumps' inputs need not keep.
func (d *Dump) ReportInput() (report.Input, error) {
	a, err := d.Analysis()
	if err != nil {
		return report.Input{}, err
	}
	return report.Input{Path: d.path, Format: d.format.Name, A: a}, nil
}
