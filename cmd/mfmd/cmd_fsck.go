package main

import (
	"fmt"
	"io"

	"github.com/mfm-project/mfm/episodes"
)

func init() {
	register(&command{
		name:    "fsck",
		summary: "verify a store; --repair truncates torn tails left by a crash",
		usage: "[--repair] [--quiet] DIR\n\n" +
			"Checks every life of the store: index.jsonl, grid.jsonl and logs.txt are well-formed\n" +
			"and end in a newline, every index row names a complete episode directory, ids are\n" +
			"unique. A frame an index row names but that is missing is a warning. Prints one line\n" +
			"per finding and exits 1 if there is any error, 0 otherwise.\n" +
			"--repair (takes the writer lock) first truncates torn tails, removes interrupted\n" +
			"episode writes and finishes an interrupted life change, then verifies.",
		run: runFsck,
	})
}

func runFsck(args []string, stdout, stderr io.Writer) int {
	c := commands["fsck"]
	fs := newFlagSet(c, stdout, stderr)
	repair := fs.Bool("repair", false, "fix what a crash can leave (needs the writer lock)")
	quiet := fs.Bool("quiet", false, "print errors only, no warnings")
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "mfmd fsck: want exactly one argument, the store directory")
		fs.Usage()
		return 2
	}
	s, err := episodes.Open(fs.Arg(0))
	if err != nil {
		return fail(stderr, c.name, err)
	}
	if *repair {
		done, err := episodes.Repair(s)
		for _, d := range done {
			fmt.Fprintln(stdout, "repaired: "+d)
		}
		if err != nil {
			return fail(stderr, c.name, err)
		}
	}
	rep, err := episodes.Verify(s)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	for _, i := range rep.Issues {
		if *quiet && i.Severity != episodes.Problem {
			continue
		}
		fmt.Fprintln(stdout, i.String())
	}
	errs, warns := rep.Count(episodes.Problem), rep.Count(episodes.Warning)
	fmt.Fprintf(stdout, "%s: %d life(s), %d index row(s), %d grid row(s): %d error(s), %d warning(s)\n",
		s.Root, rep.Lives, rep.Rows, rep.GridRows, errs, warns)
	if errs > 0 {
		return 1
	}
	return 0
}
