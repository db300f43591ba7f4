package main

import (
	"fmt"
	"io"

	"github.com/mfm-project/mfm/episodes"
)

func init() {
	register(&command{
		name:    "init",
		summary: "create an empty store (format v1) in DIR",
		usage:   "DIR\n\nCreates DIR (if needed) with mfm-store.json, empty index.jsonl, grid.jsonl and\nlogs.txt, and episodes/, mine/ and .mfm/. DIR must not already hold a store.\nThe format is described in docs/STORE.md.",
		run:     runInit,
	})
}

func runInit(args []string, stdout, stderr io.Writer) int {
	c := commands["init"]
	fs := newFlagSet(c, stdout, stderr)
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "mfmd init: want exactly one argument, the store directory")
		fs.Usage()
		return 2
	}
	s, err := episodes.Init(fs.Arg(0))
	if err != nil {
		return fail(stderr, c.name, err)
	}
	fmt.Fprintf(stdout, "initialised store %s (format v%d, id %s)\n", s.Root, s.Format.Version, s.Format.ID)
	return 0
}
