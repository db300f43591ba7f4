package main

import (
	"fmt"
	"io"

	"github.com/mfm-project/mfm/artifact"
	"github.com/mfm-project/mfm/episodes"
)

func init() {
	register(&command{
		name:    "init",
		summary: "create an empty store (format v1) in DIR, or seed one from an artifact",
		usage: `[--from-artifact A.tar] [--axes luanti|minecraft] DIR

Creates DIR (if needed) with mfm-store.json, empty index.jsonl, grid.jsonl and
logs.txt, and episodes/, mine/ and .mfm/. DIR must not already hold a store.
With --from-artifact DIR must be new or an empty directory, the artifact is
verified first (a file that does not match its manifest refuses it, and
nothing is created), and the store is built beside DIR and renamed into
place when complete (a failure leaves DIR as it was); its mine/ becomes
DIR/mine/, its episodes become previous/life_N/, and mfm-store.json "from"
records the provenance (artifact, manifest sha256, source store, include,
times, counts), which the mount's README.md shows.
--axes declares the world's axes in mfm-store.json ("axes"): luanti is north +z
and blocks centred on whole numbers (a position falls in the nearest block),
minecraft (the default when none is declared) north -z and floor. Maps and the
recorder's grid cells follow them (docs/VIEWS.md).
The format is described in docs/STORE.md.`,
		run: runInit,
	})
}

func runInit(args []string, stdout, stderr io.Writer) int {
	c := commands["init"]
	fs := newFlagSet(c, stdout, stderr)
	from := fs.String("from-artifact", "", "seed the store from this artifact (mfmd artifact export)")
	axesName := fs.String("axes", "", "declare the world's axes: luanti (north +z, round) or minecraft (north -z, floor)")
	pos, code, done := parseInterleaved(fs, args, stdout)
	if done {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "mfmd init: want exactly one argument, the store directory")
		fs.Usage()
		return 2
	}
	axes, ok := map[string]episodes.Axes{"": {}, "luanti": episodes.LuantiAxes, "minecraft": {North: "-z", Cells: "floor"}}[*axesName]
	if !ok {
		fmt.Fprintf(stderr, "mfmd init: --axes %q: want luanti or minecraft\n", *axesName)
		return 2
	}
	if *from != "" && *axesName != "" {
		fmt.Fprintln(stderr, "mfmd init: --axes and --from-artifact: a seeded store keeps the axes of its artifact")
		return 2
	}
	if *from == "" {
		s, err := episodes.Init(pos[0])
		if err != nil {
			return fail(stderr, c.name, err)
		}
		if *axesName != "" {
			if err := s.SetAxes(axes); err != nil {
				return fail(stderr, c.name, err)
			}
		}
		fmt.Fprintf(stdout, "initialised store %s (format v%d, id %s)\n", s.Root, s.Format.Version, s.Format.ID)
		return 0
	}
	s, p, err := artifact.Seed(*from, pos[0])
	if err != nil {
		return fail(stderr, c.name, err)
	}
	fmt.Fprintf(stdout, "initialised store %s (format v%d, id %s) from artifact %s\n", s.Root, s.Format.Version, s.Format.ID, *from)
	fmt.Fprintf(stdout, "verified %d files against manifest sha256 %s; include %s: %d in mine/, %d episodes",
		p.Files, p.ManifestSHA256, p.Include, p.MineFiles, p.Episodes)
	if len(p.Lives) > 0 {
		fmt.Fprintf(stdout, " in %d previous life dir(s)", len(p.Lives))
	}
	fmt.Fprintf(stdout, "\nsource store %q: %d lives, %d episodes, %d steps, exported %s\n", p.SourceStore, p.SourceLives, p.SourceEpisodes, p.SourceSteps, p.Exported)
	return 0
}
