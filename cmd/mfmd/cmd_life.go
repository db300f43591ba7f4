package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/mfm-project/mfm/episodes"
)

func init() {
	register(&command{
		name:    "life",
		summary: "start a new life (freeze the current one in previous/life_N, keep mine/) or list lives",
		usage: `new --store DIR
       mfmd life list --store DIR

new   moves the current life's logs.txt, index.jsonl, grid.jsonl, episodes/
      and run.json (a play session's score) unchanged to previous/life_N/ and
      starts life N+1 with empty ones; mine/ stays. It takes the writer lock: stop the harness (mfmd record) first.
list  prints each life with its episodes and last step.`,
		run: runLife,
	})
}

func runLife(args []string, stdout, stderr io.Writer) int {
	c := commands["life"]
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fs := newFlagSet(c, stdout, stderr)
		fs.SetOutput(stdout)
		fs.Usage()
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	sub := args[0]
	fset := newFlagSet(c, stdout, stderr)
	store := fset.String("store", "", "store directory (required)")
	if code, done := parseFlags(fset, args[1:], stdout); done {
		return code
	}
	if *store == "" || fset.NArg() != 0 {
		fmt.Fprintln(stderr, "mfmd life: want --store DIR and no other arguments")
		return 2
	}
	s, err := episodes.Open(*store)
	if err != nil {
		return fail(stderr, "life", err)
	}
	switch sub {
	case "list":
		return lifeList(s, stdout, stderr)
	case "new":
		return lifeNew(s, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "mfmd life: unknown subcommand %q (want new or list)\n", sub)
		return 2
	}
}

// lifeList prints one line per life: where it is, its episodes, its last step.
func lifeList(s *episodes.Store, stdout, stderr io.Writer) int {
	lives, err := s.Lives()
	if err != nil {
		return fail(stderr, "life", err)
	}
	for _, l := range lives {
		n, last, err := lifeStats(l)
		if err != nil {
			return fail(stderr, "life", err)
		}
		where := "current"
		if !l.Current {
			where, _ = filepath.Rel(s.Root, l.Root)
		}
		fmt.Fprintf(stdout, "life %d\t%s\t%d episodes\tlast step %d\n", l.N, where, n, last)
	}
	return 0
}

// lifeNew freezes the current life under previous/ and begins the next,
// keeping mine/; it refuses while a writer records into the store.
func lifeNew(s *episodes.Store, stdout, stderr io.Writer) int {
	w, err := s.OpenWriter()
	if err != nil {
		if errors.Is(err, episodes.ErrLocked) {
			return fail(stderr, "life", fmt.Errorf("cannot start a new life while a writer records into the store: %w", err))
		}
		return fail(stderr, "life", err)
	}
	cur, err := s.CurrentLife()
	if err != nil {
		w.Close()
		return fail(stderr, "life", err)
	}
	n, last, err := lifeStats(cur)
	if err != nil {
		w.Close()
		return fail(stderr, "life", err)
	}
	frozen, err := w.NewLife()
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(stderr, "life", err)
	}
	mineFiles := 0
	filepath.WalkDir(s.Path(episodes.MineDir), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			mineFiles++
		}
		return nil
	})
	rel, _ := filepath.Rel(s.Root, frozen.Root)
	fmt.Fprintf(stdout, "life %d frozen in %s (%d episodes, last step %d); life %d begins; mine/ kept (%d files)\n",
		frozen.N, rel, n, last, frozen.N+1, mineFiles)
	return 0
}

func lifeStats(l episodes.Life) (int, int64, error) {
	rows, err := l.AllRows()
	if err != nil {
		return 0, 0, err
	}
	var last int64
	for _, r := range rows {
		last = max(last, r.LastStep)
	}
	return len(rows), last, nil
}
