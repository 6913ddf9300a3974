package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/heapx/heapx/internal/hostile"
)

// coreCommand runs the crafted-core subcommands bench/hostile.sh uses on
// a real core (cores are too big to copy per case, so a case is applied
// to the core and taken back):
//
//	core-list CORE [BINARY]          one line per case: name, then what the error must say ("-": read it)
//	core-apply CORE NAME [BINARY]    apply a case; prints the file heapx must read (CORE, or a cut copy)
//	core-undo CORE                   take the applied case back
func coreCommand(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("usage: core-list|core-apply|core-undo CORE [NAME] [BINARY]")
	}
	cmd, core := args[0], args[1]
	undoFile := core + ".undo.json"
	bin := ""
	switch cmd {
	case "core-list":
		if len(args) > 2 {
			bin = args[2]
		}
		cases, err := hostile.CoreCases(core, bin)
		if err != nil {
			return err
		}
		for _, c := range cases {
			want := c.Want
			if want == "" {
				want = "-"
			}
			fmt.Printf("%s\t%s\n", c.Name, want)
		}
		return nil
	case "core-apply":
		if len(args) < 3 {
			return fmt.Errorf("usage: core-apply CORE NAME [BINARY]")
		}
		if len(args) > 3 {
			bin = args[3]
		}
		if _, err := os.Stat(undoFile); err == nil {
			return fmt.Errorf("%s exists: a case is applied already (core-undo first)", undoFile)
		}
		cases, err := hostile.CoreCases(core, bin)
		if err != nil {
			return err
		}
		for _, c := range cases {
			if c.Name != args[2] {
				continue
			}
			if c.Truncate > 0 {
				cut := core + ".cut"
				fmt.Println(cut)
				return hostile.WriteCut(core, cut, c.Truncate)
			}
			undo, err := hostile.ApplyCore(core, c)
			if err != nil {
				return err
			}
			b, err := json.Marshal(undo)
			if err != nil {
				return err
			}
			fmt.Println(core)
			return os.WriteFile(undoFile, b, 0o644)
		}
		return fmt.Errorf("no case %s", args[2])
	case "core-undo":
		os.Remove(core + ".cut")
		b, err := os.ReadFile(undoFile)
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			return err
		}
		var undo []hostile.CorePatch
		if err := json.Unmarshal(b, &undo); err != nil {
			return err
		}
		if _, err := hostile.ApplyCore(core, hostile.CoreCase{Patches: undo}); err != nil {
			return err
		}
		return os.Remove(undoFile)
	}
	return fmt.Errorf("unknown command %s", cmd)
}
