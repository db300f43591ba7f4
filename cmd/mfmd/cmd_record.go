package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/harness"
)

func init() {
	register(&command{
		name:    "record",
		summary: "record episodes from JSON lines on stdin (the harness protocol)",
		usage: "--store DIR [--init] [--frames] [--task TEXT] [--no-reflexes]\n\n" +
			"Reads one JSON request per line on stdin ({\"op\": \"initial\"|\"begin\"|\"step\"|\"note\"|\n" +
			"\"end\"|\"abort\", ...}) and writes one JSON reply per line on stdout ({\"ok\": true, \"line\": N,\n" +
			"...}; on \"end\" the index row written). A bad line gets {\"ok\": false, \"error\": \"line N: ...\"}\n" +
			"and changes nothing. Holds the store's writer lock until stdin ends. Exits 1 if any\n" +
			"line was rejected. The protocol is in docs/RECORD.md.",
		run: runRecord,
	})
}

func runRecord(args []string, stdout, stderr io.Writer) int {
	return runRecordIO(args, os.Stdin, stdout, stderr)
}

func runRecordIO(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := commands["record"]
	fs := newFlagSet(c, stdout, stderr)
	dir := fs.String("store", "", "store directory (required)")
	initStore := fs.Bool("init", false, "create the store first if DIR holds none")
	frames := fs.Bool("frames", false, "keep every step's frame (frames/NNNNNN.png) and state (steps.jsonl)")
	task := fs.String("task", "", "task text for the initial log block")
	noReflexes := fs.Bool("no-reflexes", false, "do not check mine/reflexes on the steps of call episodes")
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	if *dir == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "mfmd record: want --store DIR and no other arguments")
		fs.Usage()
		return 2
	}
	s, err := episodes.Open(*dir)
	if err != nil && *initStore {
		s, err = episodes.Init(*dir)
	}
	if err != nil {
		return fail(stderr, c.name, err)
	}
	rec, err := harness.NewRecorder(s, harness.Options{Frames: *frames, Task: *task, NoReflexes: *noReflexes})
	if err != nil {
		return fail(stderr, c.name, err)
	}
	bad, err := harness.Serve(rec, stdin, stdout)
	if cerr := rec.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(stderr, c.name, err)
	}
	if bad > 0 {
		slog.Warn("record: lines rejected", "count", bad)
		return 1
	}
	return 0
}
