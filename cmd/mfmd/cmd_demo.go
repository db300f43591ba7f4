package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/mfm-project/mfm/episodes"
	mfmfs "github.com/mfm-project/mfm/fs"
	"github.com/mfm-project/mfm/luanti"
)

// demoRun is the committed Luanti run, relative to the repository root.
const demoRun = "examples/runs/luanti-forest/store"

func init() {
	register(&command{
		name:    "demo",
		summary: "mount a copy of the recorded Luanti run (or, with --live, play and record while mounted)",
		usage:   "[--live] [--episodes N] [--run DIR] [MOUNTPOINT]",
		run:     runDemo,
	})
}

func runDemo(args []string, stdout, stderr io.Writer) int {
	c := commands["demo"]
	fl := newFlagSet(c, stdout, stderr)
	live := fl.Bool("live", false, "start the game and record episodes into the mounted store while you watch")
	n := fl.Int("episodes", 0, "with --live: stop recording after N episodes (0: until Ctrl-C)")
	run := fl.String("run", "", "recorded store to copy (default: "+demoRun+" found from the current directory up)")
	if code, done := parseFlags(fl, args, stdout); done {
		return code
	}
	mnt := "/tmp/mfm"
	if fl.NArg() > 1 {
		fmt.Fprintln(stderr, "mfmd demo: at most one MOUNTPOINT")
		return 2
	} else if fl.NArg() == 1 {
		mnt = fl.Arg(0)
	}
	work, err := os.MkdirTemp("", "mfm-demo-*")
	if err != nil {
		return fail(stderr, "demo", err)
	}
	defer os.RemoveAll(work)
	storeDir := filepath.Join(work, "store")
	var store *episodes.Store
	if *live {
		if err := luanti.Available(); err != nil {
			return fail(stderr, "demo", err)
		}
		if store, err = episodes.Init(storeDir); err != nil {
			return fail(stderr, "demo", err)
		}
		if err := store.SetAxes(episodes.LuantiAxes); err != nil {
			return fail(stderr, "demo", err)
		}
	} else {
		src := *run
		if src == "" {
			if src, err = findUp(demoRun); err != nil {
				return fail(stderr, "demo", err)
			}
		}
		if out, err := exec.Command("cp", "-r", src, storeDir).CombinedOutput(); err != nil {
			return fail(stderr, "demo", fmt.Errorf("copy %s: %v: %s", src, err, out))
		}
		if store, err = episodes.Open(storeDir); err != nil {
			return fail(stderr, "demo", err)
		}
	}
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		return fail(stderr, "demo", err)
	}
	hooks, _, closeHooks, err := setupHooks(store)
	if err != nil {
		return fail(stderr, "demo", err)
	}
	defer closeHooks()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := mfmfs.Mount(ctx, store, mnt, mfmfs.Options{Hooks: hooks})
	if err != nil {
		return fail(stderr, "demo", err)
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	recDone := make(chan error, 1)
	if *live {
		go func() {
			st, err := luanti.Record(ctx, luanti.RecordOptions{Store: storeDir, Episodes: *n, Seed: luanti.DefaultSeed, Nice: 5, Logger: slog.Default()})
			fmt.Fprint(stderr, st.String())
			recDone <- err
		}()
		fmt.Fprintf(stdout, "Playing Luanti and recording into %s, mounted at %s. Try, in another shell:\n", storeDir, mnt)
		fmt.Fprintf(stdout, "  tail -f %s/index.jsonl | jq -c '{id, summary, tags}'\n  cat %s/now/state.json\n  ls %s/episodes | tail\n", mnt, mnt, mnt)
	} else {
		printDemoTour(stdout, mnt, store)
	}
	fmt.Fprintln(stdout, "Ctrl-C unmounts.")
	waited := make(chan struct{})
	go func() { srv.Wait(); close(waited) }()
	recording := *live
	select {
	case <-waited:
		return 0
	case <-sigs:
	case err := <-recDone:
		recording = false
		if err != nil {
			fmt.Fprintln(stderr, "mfmd demo: recording stopped:", err)
		}
		<-sigs
	}
	cancel()
	if recording {
		<-recDone
	}
	if err := srv.Unmount(); err != nil {
		return fail(stderr, "demo", err)
	}
	select {
	case <-waited:
	case <-sigs:
	}
	return 0
}

// findUp looks for rel in the current directory and its parents.
func findUp(rel string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New(rel + " not found: run from the repository or give --run DIR")
		}
		dir = parent
	}
}

// printDemoTour prints commands to try, with real ids from the run: the
// first tree felled, the first shaft the agent could not walk out of, the
// first fall damage.
func printDemoTour(w io.Writer, mnt string, s *episodes.Store) {
	life, err := s.CurrentLife()
	pick := map[string]string{}
	var last, prevKind string
	if err == nil {
		_, _ = episodes.ReadRows(life.IndexPath(), 0, func(r episodes.Row, _ episodes.Line) error {
			last = r.ID
			set := func(k string, ok bool) {
				if _, done := pick[k]; !done && ok {
					pick[k] = r.ID
				}
			}
			set("tree", slices.ContainsFunc(r.Events, func(e string) bool { return strings.HasPrefix(e, "mine_block tree") }))
			set("broke", slices.Contains(r.Tags, "broke"))
			set("shaft", slices.Contains(r.Tags, "stuck") && prevKind == "dig_down")
			set("stuck", slices.Contains(r.Tags, "stuck"))
			set("damage", slices.Contains(r.Tags, "damage"))
			set("placed", slices.Contains(r.Tags, "placed"))
			prevKind = ""
			if r.ActionKind != nil {
				prevKind = *r.ActionKind
			}
			return nil
		}, nil)
	}
	or := func(ts ...string) string {
		for _, t := range ts {
			if id, ok := pick[t]; ok {
				return id
			}
		}
		return last
	}
	fmt.Fprintf(w, "Mounted a copy of a real recorded Luanti run at %s (episodes up to %s). Try, in another shell:\n", mnt, last)
	fmt.Fprintf(w, "  cat %s/README.md\n", mnt)
	fmt.Fprintf(w, "  jq -c 'select(.tags | index(\"stuck\")) | {id, summary}' %s/index.jsonl | head -3\n", mnt)
	fmt.Fprintf(w, "  grep -l 'pick_up tree' %s/episodes/*/steps.jsonl | head   # where wood was gathered\n", mnt)
	fmt.Fprintf(w, "  ls %s/q/tag:damage/                              # a cue query is a directory: a link per match\n", mnt)
	fmt.Fprintf(w, "  jq -c '{id, summary}' '%s/q/tag:stuck last:3/results.jsonl'\n", mnt)
	fmt.Fprintf(w, "  cat %s/map/here@r=12.txt                         # the world around the agent, one character a block\n", mnt)
	fmt.Fprintf(w, "  mfmd episodes --store %s --tag damage                 # the paper's query tool: falls\n", s.Root)
	fmt.Fprintf(w, "  cat %s/episodes/%s/outcome.json                  # first tree felled\n", mnt, or("tree", "broke"))
	fmt.Fprintf(w, "  cat %s/episodes/%s/outcome.json                  # first fall damage\n", mnt, or("damage"))
	fmt.Fprintf(w, "  xdg-open %s/episodes/%s/observation/image@zoom=2.png   # a view of a frame\n", mnt, or("tree", "broke"))
	fmt.Fprintf(w, "  xdg-open %s/episodes/%s/sheet.png                # all frames of an episode\n", mnt, or("damage", "placed"))
	fmt.Fprintf(w, "  xdg-open %s/q/tag:damage/sheet.png               # the frames of every match\n", mnt)
	fmt.Fprintf(w, "  echo '- %s: a 3-deep shaft is a trap; pillar out with dirt' >> %s/mine/notes.md\n", or("shaft", "stuck"), mnt)
}
