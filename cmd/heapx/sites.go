package main

import (
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/heapx/heapx/formats/heapprofile"
	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/render"
)

// newSitesCmd makes `heapx sites`, the allocation sites of a sampling heap
// profile or of a heap dump with allocation stacks. It is a command, not
// a registered query, because a .heapprofile is not a heap graph: the
// registry's queries read analysed snapshots.
func newSitesCmd(stderr *os.File) *cobra.Command {
	var asJSON, asCSV, tree, bottomUp bool
	var limit int
	c := &cobra.Command{
		Use:   "sites FILE",
		Short: "Where memory was allocated: top functions of a .heapprofile, or live objects by allocation stack",
		Long: `sites shows where memory was allocated, by function and script:line:column.

On a sampling heap profile (.heapprofile: heapx capture --sampling,
node --heap-prof, DevTools' "Allocation sampling") it prints the functions
by bytes allocated in them (self) and under them (total), as pprof's top;
--tree prints the call tree top-down, --bottom-up each allocating function
with the callers it allocated through.

On a heap snapshot or timeline with allocation stacks (node
--track-heap-objects, heapx capture --timeline) it groups the live objects
by the function that allocated them, with count, shallow and retained
size (DevTools' Allocation view).`,
		Args: oneFile,
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON && asCSV {
				return errors.New("--json and --csv cannot be used together")
			}
			if tree && bottomUp {
				return errors.New("--tree and --bottom-up cannot be used together")
			}
			if limit < 0 {
				return errors.New("-n must be 0 (all) or more")
			}
			path := args[0]
			var r *query.Result
			// Only a regular file is looked at first: a pipe's head would
			// be gone for the dump reader (a profile from a pipe is refused
			// by it, saying what the input is).
			if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && heapprofile.DetectFile(path) {
				p, err := heapprofile.ReadFile(path)
				if err != nil {
					return err
				}
				view := query.SitesTop
				switch {
				case tree:
					view = query.SitesTree
				case bottomUp:
					view = query.SitesBottomUp
				}
				if r, err = query.ProfileSites(path, p, view, limit); err != nil {
					return err
				}
			} else {
				if tree || bottomUp {
					return errors.New("--tree and --bottom-up are views of a sampling heap profile (.heapprofile); a heap dump's sites are one table")
				}
				_, a, err := loadAndAnalyze(path, stderr)
				if err != nil {
					return err
				}
				if r, err = query.AllocationSites(path, a, limit); err != nil {
					return err
				}
			}
			return render.Write(cmd.OutOrStdout(), r, outputForm(asJSON, asCSV), render.Options{Inputs: args})
		},
	}
	f := c.Flags()
	f.BoolVar(&asJSON, "json", false, "print JSON instead of text")
	f.BoolVar(&asCSV, "csv", false, "print CSV (raw numbers) instead of text")
	f.BoolVar(&tree, "tree", false, "a sampling profile's call tree, top-down")
	f.BoolVar(&bottomUp, "bottom-up", false, "a sampling profile's allocating functions, each with its callers")
	f.IntVarP(&limit, "limit", "n", 20, "rows to show (per level in trees); 0 for all")
	return c
}
