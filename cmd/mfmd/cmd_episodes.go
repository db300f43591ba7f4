package main

import (
	"context"
	"io"
	"os"
	"strings"

	"github.com/mfm-project/mfm/index/episodespy"
)

func init() {
	register(&command{
		name:    "episodes",
		summary: "the paper's tools/episodes.py: --last --steps --near --tag --action --grep --json ...",
		usage: "[--store DIR] [episodes.py flags]\n\n" +
			"A byte-exact drop-in for the paper's query tool over the store DIR (default $MFM_STORE,\n" +
			"else the current directory): the same flags, abbreviations (--la 5, --steps=...), filter\n" +
			"order (steps, near, tag, action, grep, last) and output lines; usage errors exit 2.\n" +
			"--store must be spelled out in full. A store (or --root, relative to it) that does not exist or\n" +
			"holds no index.jsonl is an error (exit 1), never an empty answer. mfmd episodes -h prints the\n" +
			"tool's own help.",
		run: runEpisodes,
	})
}

// episodesRenderer draws --sheet and --then-now images; nil uses the
// tool's plain fallback. mount_*.go or a view wiring file may set it.
var episodesRenderer episodespy.Renderer

func runEpisodes(args []string, stdout, stderr io.Writer) int {
	store := os.Getenv("MFM_STORE")
	if store == "" {
		store = "."
	}
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--store" && i+1 < len(args):
			store = args[i+1]
			i++
		case strings.HasPrefix(a, "--store="):
			store = strings.TrimPrefix(a, "--store=")
		default:
			rest = append(rest, a)
		}
	}
	return episodespy.Main(context.Background(), rest, episodespy.Env{
		Store: store, Render: episodesRenderer, Stdout: stdout, Stderr: stderr,
	})
}
