package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	hx "github.com/heapx/heapx"
	"github.com/heapx/heapx/formats/heapprofile"
	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/render"
)

// newSitesCmd makes `heapx sites`, the allocation sites of a sampling heap
// profile or of a heap dump with allocation stacks. It is a command, not
// a registered query, because a .heapprofile is not a heap graph: the
// registry's queries read analysed snapshots. Given a series of dumps it
// runs the registered site-growth query on them.
func newSitesCmd(stderr *os.File) *cobra.Command {
	var asJSON, asCSV, tree, bottomUp, churn bool
	var limit int
	c := &cobra.Command{
		Use:   "sites FILE [FILE...]",
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
size (DevTools' Allocation view). --churn compares, per function, what it
allocated while tracked (the dead objects too) with what is still alive,
the functions whose allocations are most gone first.

Given several dumps with allocation stacks, oldest first, it counts each
site's live objects in every one and lists the sites whose count grows at
every step (heapx site-growth).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return nil
			}
			return oneFile(cmd, args)
		},
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
			if churn && (tree || bottomUp) {
				return errors.New("--churn is a table of its own: not with --tree or --bottom-up")
			}
			if len(args) > 1 {
				if tree || bottomUp || churn {
					return errors.New("--tree, --bottom-up and --churn take one file; several dumps are a series, whose growing sites heapx sites lists")
				}
				return runQuery(cmd, query.Lookup("site-growth"), args, map[string]any{"limit": limit}, outputForm(asJSON, asCSV), stderr)
			}
			path := args[0]
			var r *query.Result
			if heapprofile.IsProfileFile(path) {
				if churn {
					return fmt.Errorf("%s: --churn needs a timeline (heapx capture --timeline) or a dump taken with node --track-heap-objects: a sampling heap profile keeps the samples of collected objects but does not say which were collected", path)
				}
				var opts hx.Options
				mapOptions(stderr, &opts)
				p, res, err := hx.OpenProfile(path, opts)
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
				if r, err = query.ProfileSites(path, p, res, view, limit); err != nil {
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
				sites := query.AllocationSites
				if churn {
					sites = query.AllocationChurn
				}
				if r, err = sites(path, a, limit); err != nil {
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
	f.BoolVar(&churn, "churn", false, "a timeline's functions by bytes allocated and gone (much allocation, little survival)")
	f.IntVarP(&limit, "limit", "n", 20, "rows to show (per level in trees); 0 for all")
	return c
}
