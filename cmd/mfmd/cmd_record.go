package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/harness"
)

func init() {
	register(&command{
		name:    "record",
		summary: "record episodes from JSON lines on stdin (the harness protocol)",
		usage: `--store DIR [--init] [--frames] [--task TEXT] [--no-reflexes] [--timeout 10s] [--frame-dir DIR]

Reads one JSON request per line on stdin and writes one JSON reply per line
on stdout: {"ok": true, "line": N, "op": OP, "episode": "ep_NNNNNN", ...}.
Any request may carry "id", echoed in its reply. Field names are exact
(case-sensitive) and each op takes only its own fields. The ops:

  initial  {"state": STATE} [+ frame]: the initial episode (kind initial),
           only as the first episode of a life; the reply carries its row
  begin    {"call": {"kind": NAME, "args": {...}} or {"raw": {"attack": 1}},
           optional "budget", "plan", "header", "meta"}: opens an episode
  call     {"call": {"kind": PROCEDURE, "args": {...}}}: runs
           mine/procedures/PROCEDURE on the latest state and opens its
           episode; the reply's "actions" is the plan to execute. A call
           that fails (refused, crashed, timeout, disabled, unusable,
           not-found, ...) is recorded at once: the reply carries
           "outcome", "error" and "row", and no episode stays open
  step     {"state": STATE, optional "action", "events", "cells", frame;
           in a call episode optional "item" (the plan index executing)}:
           adds a step. In a call episode mine/reflexes are checked; the
           reply may carry "reflexes" (firings), "stop" (abandon the item)
           and the new plan in "actions"
  note     {"text": "..."}: a note for the open episode
  end      after call: optional "outcome" (default stopped after a
           reflex stop, else ok), "error", "done" (items executed,
           default all): writes the episode; the reply carries its row
  abort    drops the open episode (now/ goes back to the state before it)
  life     ends the current life (to previous/life_N, mine/ stays) and
           starts the next; the reply carries "life" and "previous"

STATE is {"step": N (required, strictly increasing), "x", "y", "z", "yaw",
"pitch", "inventory", "health", "gui_open", "milestones", "extra"}; a field
left out keeps its value from the latest state of the life. A cell is
{"cell": [x, y, z], "kind": placed|opened|blocked|water, "item"}. A frame
is "frame_png_b64" or "frame_path" (relative to --frame-dir), a complete
PNG. A bad line gets {"ok": false, "error": "line N: ..."} and changes
nothing. Holds the store's writer lock until stdin ends. Exits 1 if any
line was rejected or stdin ended inside an episode (which is dropped).
The protocol is in docs/RECORD.md.`,
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
	timeout := fs.Duration("timeout", 10*time.Second, "per-process timeout of procedures and reflexes (mfm-timeout may shorten it)")
	frameDir := fs.String("frame-dir", "", "directory a relative frame_path is resolved against (default: the working directory)")
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	if *dir == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "mfmd record: want --store DIR and no other arguments")
		fs.Usage()
		return 2
	}
	if *timeout <= 0 {
		fmt.Fprintln(stderr, "mfmd record: --timeout must be positive")
		return 2
	}
	if *frameDir != "" {
		if fi, err := os.Stat(*frameDir); err != nil || !fi.IsDir() {
			fmt.Fprintf(stderr, "mfmd record: --frame-dir %s: not a directory\n", *frameDir)
			return 2
		}
	}
	s, err := episodes.Open(*dir)
	if err != nil && *initStore {
		s, err = episodes.Init(*dir)
	}
	if err != nil {
		return fail(stderr, c.name, err)
	}
	procs := &harness.Runner{Dir: s.Path(episodes.MineDir, "procedures"), Timeout: *timeout}
	rec, err := harness.NewRecorder(s, harness.Options{Frames: *frames, Task: *task, NoReflexes: *noReflexes, Procedures: procs})
	if err != nil {
		return fail(stderr, c.name, err)
	}
	res, err := harness.Serve(rec, stdin, stdout, harness.ServeOptions{FrameDir: *frameDir})
	if cerr := rec.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(stderr, c.name, err)
	}
	if res.Dropped != "" {
		fmt.Fprintf(stderr, "mfmd record: input ended inside episode %s (%d step(s)): it is dropped, nothing of it is recorded\n", res.Dropped, res.DroppedSteps)
	}
	if res.Rejected > 0 {
		fmt.Fprintf(stderr, "mfmd record: %d of %d line(s) rejected (their replies say why)\n", res.Rejected, res.Lines)
	}
	if !res.OK() {
		return 1
	}
	return 0
}
