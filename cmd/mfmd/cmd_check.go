package main

import (
	"fmt"
	"io"

	"github.com/mfm-project/mfm/consolidate"
	"github.com/mfm-project/mfm/episodes"
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
	r, err := consolidate.Check(s, &consolidate.Resolver{Store: s})
	if err != nil {
		return fail(stderr, c.name, err)
	}
	stdout.Write(r.Text())
	if len(r.Missing) > 0 {
		return 1
	}
	return 0
}
