package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/index"
)

// openSearcher opens store s's cue index for a one-shot command (mfmd q),
// building or tailing it first, with a progress bar when stderr is a
// terminal. When the index cannot be used — another process (a mount)
// owns it, or the store is not writable — it says so on stderr and
// returns the linear Scan, which gives the same answers.
func openSearcher(s *episodes.Store, stderr io.Writer) (index.Searcher, func(), error) {
	opt := index.Options{}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		opt.Progress = stderr
	}
	x, _, err := index.Open(context.Background(), s, opt)
	if err != nil {
		if errors.Is(err, index.ErrBusy) {
			fmt.Fprintln(stderr, "mfmd: the cue index is in use by another process (a mount?); scanning index.jsonl instead")
		} else {
			fmt.Fprintf(stderr, "mfmd: cue index unavailable (%v); scanning index.jsonl instead\n", err)
		}
		return index.Scan{Store: s}, func() {}, nil
	}
	return x, func() { x.Close() }, nil
}

// openMountSearcher serves a mount's queries: by Scan at once, by the cue
// index as soon as it is open (a first build of a large store takes a
// while), kept up to date by its watcher until release.
func openMountSearcher(s *episodes.Store) (index.Searcher, func()) {
	sw := &index.Switch{Fallback: index.Scan{Store: s}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		var x *index.Index
		var st index.Stats
		var err error
		for wait := time.Second; ; wait = min(2*wait, 30*time.Second) {
			x, st, err = index.Open(ctx, s, index.Options{})
			if ctx.Err() != nil {
				if err == nil {
					x.Close()
				}
				return // unmounting
			}
			if err == nil {
				break
			}
			if !errors.Is(err, index.ErrBusy) {
				slog.Warn("cue index unavailable; queries scan index.jsonl", "err", err)
				return
			}
			// Another process (mfmd q, a second mount) holds it, perhaps
			// only for a moment: scan meanwhile, try again.
			slog.Info("cue index busy; queries scan index.jsonl until it is free", "err", err, "retry_in", wait)
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		defer x.Close()
		slog.Info("cue index ready", "docs", st.Docs, "indexed", st.Indexed, "rebuilt", st.Rebuilt, "reason", st.Reason, "took", st.Took)
		sw.Set(x)
		x.Watch(ctx, 0)
		sw.Set(index.Scan{Store: s}) // x closes below; late queries scan
	}()
	return sw, func() { cancel(); <-done }
}

// mineCites lists mine/'s citations with their lines, for in:mine.
func mineCites(s *episodes.Store) index.CiteFunc {
	return func(ctx context.Context) ([]index.Cite, error) {
		rs, err := citationResolver(s).Citations()
		if err != nil {
			return nil, err
		}
		lines := map[string][][]byte{}
		var out []index.Cite
		for _, r := range rs {
			if r.Dir == "" {
				continue // cites an episode that does not exist
			}
			ls, ok := lines[r.File]
			if !ok {
				b, err := os.ReadFile(s.Path(r.File))
				if err != nil {
					continue // changed under us; the next query sees it
				}
				ls = bytes.Split(b, []byte("\n"))
				lines[r.File] = ls
			}
			text := r.Text
			if i := r.Line - 1; i >= 0 && i < len(ls) {
				text = string(ls[i])
			}
			out = append(out, index.Cite{Dir: r.Dir, File: r.File, Line: text})
		}
		return out, ctx.Err()
	}
}
