package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/index"
	"github.com/mfm-project/mfm/index/episodespy"
	"github.com/mfm-project/mfm/index/query"
)

func init() {
	register(&command{
		name:    "q",
		summary: "run a cue query (tag:stuck near:X,Z r:8 last:5 ...) without FUSE",
		usage: "--store DIR [--json] 'QUERY'\n\n" +
			"Prints the matching index rows in chronological order: the episodes tool's human lines,\n" +
			"or with --json the rows verbatim (what /mfm/q/QUERY/results.jsonl holds). A malformed\n" +
			"query exits 2 with the bad term and the grammar (docs/QUERY.md).\n\n" +
			"Rows come from the store's cue index (store/.mfm/cue/, built or brought up to date first,\n" +
			"with a progress bar on a terminal); while another process (a mount) holds it, a scan of\n" +
			"index.jsonl gives the same rows, and says so on stderr.",
		run: runQ,
	})
}

func runQ(args []string, stdout, stderr io.Writer) int {
	c := commands["q"]
	fs := newFlagSet(c, stdout, stderr)
	dir := fs.String("store", "", "store directory")
	asJSON := fs.Bool("json", false, "print the matching rows verbatim")
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	if *dir == "" || fs.NArg() == 0 {
		fmt.Fprintln(stderr, "mfmd q: want --store DIR and a query, e.g. mfmd q --store DIR 'tag:stuck last:5'")
		return 2
	}
	q, err := query.Parse(strings.Join(fs.Args(), " "))
	if err != nil {
		fmt.Fprintf(stderr, "mfmd q: %v\n\n%s", err, query.Grammar())
		return 2
	}
	s, err := episodes.Open(*dir)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	searcher, release, err := openSearcher(s, stderr)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	defer release()
	hits, err := index.Run(context.Background(), searcher, q, mineCites(s))
	if err != nil {
		var perr *query.Error
		if errors.As(err, &perr) {
			fmt.Fprintf(stderr, "mfmd q: %v\n", err)
			return 2
		}
		return fail(stderr, c.name, err)
	}
	if len(hits) == 0 {
		fmt.Fprintln(stderr, "(no matching episodes)")
		return 0
	}
	for _, h := range hits {
		if *asJSON {
			fmt.Fprintf(stdout, "%s\n", h.Row)
			continue
		}
		line, err := episodespy.HumanLineOf(h.Row, s.Root, h.Dir)
		if err != nil {
			return fail(stderr, c.name, err)
		}
		fmt.Fprintln(stdout, line)
	}
	return 0
}
