package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/mfm-project/mfm/consolidate"
	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/harness"
)

func init() {
	register(&command{
		name:    "check",
		summary: "check mine/: citations to missing episodes, procedures without a description",
		usage:   "--store DIR\n\nPrints one line per finding; exits 1 if any citation names an episode that does not exist.",
		run:     runCheck,
	})
}

func runCheck(args []string, stdout, stderr io.Writer) int {
	c := commands["check"]
	fs := newFlagSet(c, stdout, stderr)
	dir := fs.String("store", "", "store directory")
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	if *dir == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "mfmd check: want --store DIR and no arguments")
		return 2
	}
	s, err := episodes.Open(*dir)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	cs, err := consolidate.Citations(s)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	bad := 0
	for _, r := range cs {
		if r.Missing != "" {
			bad++
			fmt.Fprintf(stdout, "%s:%d: %q: %s\n", r.File, r.Line, r.Text, r.Missing)
		}
	}
	nodesc := 0
	procs, badProcs, err := harness.ListProcedures(s.Path(episodes.MineDir, "procedures"), harness.KindProcedure)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	for _, p := range procs {
		if p.Description == "" {
			nodesc++
			fmt.Fprintf(stdout, "mine/procedures/%s: procedure %s has no description (want a first comment or docstring line)\n", filepath.Base(p.Path), p.Name)
		}
	}
	for _, e := range badProcs {
		fmt.Fprintf(stdout, "mine/procedures: %v\n", e)
	}
	fmt.Fprintf(stdout, "%d citation(s), %d to missing episodes; %d procedure(s) without a description\n", len(cs), bad, nodesc)
	if bad > 0 {
		return 1
	}
	return 0
}
