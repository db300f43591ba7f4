package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/view"
)

func init() {
	// mfmd episodes --sheet/--then-now draw with package view, not the
	// tool's plain fallback.
	episodesRenderer = view.NewFiles(view.DefaultLimits())
	register(&command{
		name:    "view",
		summary: "render a virtual image (crop, zoom, grid, sheet, then-and-now, map) without FUSE",
		usage: "--store DIR [-o OUT] PATH\n\n" +
			"Renders the view PATH — the name it has in the mount, relative to the mount root —\n" +
			"from the store DIR and writes it to OUT (default: standard output). Examples:\n" +
			"  mfmd view --store S episodes/ep_000012/observation/image@crop=100,50,160,90@zoom=4.png -o z.png\n" +
			"  mfmd view --store S episodes/ep_000012/sheet.png -o sheet.png\n" +
			"  mfmd view --store S map/here.txt\n" +
			"mfmd view --grammar prints every view the grammar accepts.",
		run: runView,
	})
}

func runView(args []string, stdout, stderr io.Writer) int {
	c := commands["view"]
	fs := newFlagSet(c, stdout, stderr)
	store := fs.String("store", os.Getenv("MFM_STORE"), "the store directory (default $MFM_STORE)")
	out := fs.String("o", "", "output file (default: standard output)")
	grammar := fs.Bool("grammar", false, "print the view grammar and exit")
	// Flags may come before or after PATH.
	var pos []string
	for {
		if code, done := parseFlags(fs, args, stdout); done {
			return code
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if *grammar {
		fmt.Fprint(stdout, view.GrammarText)
		return 0
	}
	if len(pos) != 1 || *store == "" {
		fmt.Fprintln(stderr, "mfmd view: want --store DIR and exactly one view PATH")
		fs.Usage()
		return 2
	}
	s, err := episodes.Open(*store)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	v, err := view.New(s, view.DefaultLimits())
	if err != nil {
		return fail(stderr, c.name, err)
	}
	defer v.Close()
	rel := strings.TrimPrefix(pos[0], "./")
	data, ok, err := v.View(context.Background(), rel)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	if !ok {
		return fail(stderr, c.name, fmt.Errorf("%q is not a view of %s (no such frame or episode, or not a view name); see mfmd view --grammar", rel, s.Root))
	}
	if *out == "" {
		_, err = stdout.Write(data)
	} else {
		err = os.WriteFile(*out, data, 0o644)
	}
	if err != nil {
		return fail(stderr, c.name, err)
	}
	return 0
}
