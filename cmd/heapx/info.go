package main

import (
	"os"

	"github.com/spf13/cobra"

	hx "github.com/heapx/heapx"
	"github.com/heapx/heapx/render"
)

func newInfoCmd(stderr *os.File) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "info FILE",
		Short: "Show what a heap dump holds: format, counts, sizes by node type",
		Long: `Show what a heap dump holds: its format and producer, node, edge and
string counts, the total self size, node counts and self sizes by node type
and by neutral category, and which optional sections are present.

With --json the same facts are printed as one JSON object (docs/json.md
lists the fields).`,
		Args: oneFile,
		RunE: func(cmd *cobra.Command, args []string) error {
			// The edges are counted, not kept: info reports nothing
			// else of them, and they are most of a dump's memory.
			d, err := load(args[0], stderr, hx.Options{Stored: hx.SkipStored, NodesOnly: true})
			if err != nil {
				return err
			}
			info := d.Info()
			if asJSON {
				return render.WriteJSON(cmd.OutOrStdout(), info)
			}
			return info.WriteText(cmd.OutOrStdout())
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON object instead of text")
	return c
}
