package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/render"
)

func newFleetCmd() *cobra.Command {
	var asJSON, asCSV bool
	var by []string
	var limit int
	var compare string
	var alpha float64
	c := &cobra.Command{
		Use:   "fleet DIR [--compare LABEL[=A,B]]",
		Short: "Show what grows and what leaks across the dumps of a Parquet directory (heapx export --parquet)",
		Long: `Show the fleet views of a directory of dumps that heapx export --parquet
wrote, from the classes and leak suspects computed when each dump was
exported (no dump is read again):

  - the classes whose retained size grows at every dump of a series: the
    dumps with the same labels (--label at export: pod, release...), in
    capture time order (the time the dump records, else the file's
    modification time when exported), largest growth first;
  - the leak suspects (heapx suspects), matched across dumps by their
    accumulated class and the fields that hold it, found in the most
    dumps first, with the series they were found in;
  - each dump's totals, by series and capture time.

--by release,pod makes a series of the dumps with the same values of
those labels only (say --by release to count the suspects of a release's
pods together; the dumps of several processes, interleaved by time,
seldom grow at every step). The same questions, and any other, can be
asked in SQL with heapx sql DIR (docs/sql.md, "Fleets of dumps").

--compare release=1,2 compares the dumps of two values of a label
instead, each dump a sample (--compare release when the label has just
two values): the classes whose number of instances per dump differs,
largest difference first (the difference times the class's retained size
per instance, so an array holding the extra objects does not come before
them), the classes as many in both cohorts that retain more or less (what
holds a difference), and the leak suspects whose retained size differs;
each with the mean per dump in cohort A and B, the difference B - A and
the Mann-Whitney U test's p-value, shown when under --alpha (0.05). A rank
test, so one pod far from the others does not decide (docs/sql.md).`,
		Args: oneFile,
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON && asCSV {
				return errors.New("--json and --csv cannot be used together")
			}
			if cmd.Flags().Changed("alpha") && compare == "" {
				return errors.New("--alpha needs --compare LABEL[=A,B]")
			}
			if compare != "" && len(by) > 0 {
				return errors.New("--by and --compare cannot be used together: --compare compares the dumps of two values of a label, not series")
			}
			f, err := query.ReadFleet(args[0])
			if err != nil {
				return err
			}
			var r *query.Result
			if compare != "" {
				label, values, err := parseCompare(compare)
				if err != nil {
					return err
				}
				c, err := f.Compare(label, values)
				if err != nil {
					return err
				}
				if r, err = query.FleetCompareResult(c, query.FleetCompareOptions{Alpha: alpha, Limit: limit}); err != nil {
					return err
				}
			} else if r, err = query.FleetResult(f, query.FleetOptions{By: by, Limit: limit}); err != nil {
				return err
			}
			r.Query = "fleet"
			return render.Write(cmd.OutOrStdout(), r, outputForm(asJSON, asCSV), render.Options{Inputs: args})
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of text")
	c.Flags().BoolVar(&asCSV, "csv", false, "print CSV (raw numbers) instead of text")
	c.Flags().StringSliceVar(&by, "by", nil, "label `KEYS` whose values make a series (default: all labels)")
	c.Flags().IntVarP(&limit, "limit", "n", 20, "number of rows of each view to print (0: all)")
	c.Flags().StringVar(&compare, "compare", "", "compare the dumps of two values of a label, `LABEL[=A,B]` (release=41,42)")
	c.Flags().Float64Var(&alpha, "alpha", query.DefaultAlpha, "with --compare, show the differences whose p-value is under `P` (1: all)")
	return c
}

// parseCompare reads --compare's LABEL or LABEL=A,B.
func parseCompare(s string) (label string, values []string, err error) {
	label, vs, hasValues := strings.Cut(s, "=")
	if label == "" {
		return "", nil, fmt.Errorf("--compare %q: name a label, LABEL or LABEL=A,B", s)
	}
	if !hasValues {
		return label, nil, nil
	}
	values = strings.Split(vs, ",")
	if len(values) != 2 || values[0] == "" || values[1] == "" {
		return "", nil, fmt.Errorf("--compare %s: give two values after the label, LABEL=A,B", s)
	}
	return label, values, nil
}
