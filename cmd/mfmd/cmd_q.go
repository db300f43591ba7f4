package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/mfm-project/mfm/consolidate"
	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/index"
	"github.com/mfm-project/mfm/index/episodespy"
	"github.com/mfm-project/mfm/index/query"
)

func init() {
	register(&command{
		name:    "q",
		summary: "run a cue query (tag:stuck near:X,Z r:8 last:5 ...) without FUSE",
		usage: "--store DIR [--json | --explain] 'QUERY'\n\n" +
			"Prints the matching index rows in chronological order: the episodes tool's human lines,\n" +
			"or with --json the rows verbatim (what /mfm/q/QUERY/results.jsonl holds). A malformed\n" +
			"query exits 2 with the bad term and the grammar (docs/QUERY.md). --explain prints, term by\n" +
			"term, how many episodes matched after it and what it was read as (/mfm/q/QUERY/explain).\n\n" +
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
	explain := fs.Bool("explain", false, "print each term's count and reading instead of the rows")
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
	if *explain {
		b, err := index.Explain(context.Background(), s, strings.Join(fs.Args(), " "), (&consolidate.Resolver{Store: s}).InMine())
		if err != nil {
			return fail(stderr, c.name, err)
		}
		stdout.Write(b)
		return 0
	}
	searcher, release := openSearcher(s, stderr)
	defer release()
	hits, err := index.Run(context.Background(), searcher, q, (&consolidate.Resolver{Store: s}).InMine())
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

// openSearcher opens store s's cue index for mfmd q, with a progress bar
// when stderr is a terminal; when the index cannot be used it says why on
// stderr and returns the scan that index.OpenOrScan falls back to.
func openSearcher(s *episodes.Store, stderr io.Writer) (index.Searcher, func()) {
	opt := index.Options{}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		opt.Progress = stderr
	}
	searcher, release, why := index.OpenOrScan(context.Background(), s, opt)
	switch {
	case errors.Is(why, index.ErrBusy):
		fmt.Fprintln(stderr, "mfmd: the cue index is in use by another process (a mount?); scanning index.jsonl instead")
	case why != nil:
		fmt.Fprintf(stderr, "mfmd: cue index unavailable (%v); scanning index.jsonl instead\n", why)
	}
	return searcher, release
}
