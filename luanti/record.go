package luanti

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/harness"
)

// RecordOptions configure Record.
type RecordOptions struct {
	Store    string // store directory, created if it holds no store
	Episodes int    // stop after this many episodes (0: until ctx ends)
	Seed     int64  // map seed
	GameDir  string // world and logs (default: a temporary directory, removed)
	Nice     int    // niceness added to the game and Xvfb
	Logger   *slog.Logger
	// OnGame, if set, is called once the game is ready.
	OnGame func(*Game)
}

// RunStats are the figures of one recording session.
type RunStats struct {
	Episodes, Steps, Frames int
	Elapsed                 time.Duration
	AtomOK, AtomFail        map[string]int
}

func (s RunStats) String() string {
	var b strings.Builder
	sec := s.Elapsed.Seconds()
	fmt.Fprintf(&b, "%d episodes, %d steps, %d frames in %.1f s: %.1f steps/s, %.2f frames/s\n", s.Episodes, s.Steps, s.Frames, sec, float64(s.Steps)/sec, float64(s.Frames)/sec)
	for _, k := range sortedKeys(merge(s.AtomOK, s.AtomFail)) {
		fmt.Fprintf(&b, "  %-14s ok %3d  failed %3d\n", k, s.AtomOK[k], s.AtomFail[k])
	}
	return b.String()
}

func merge(a, b map[string]int) map[string]int {
	m := map[string]int{}
	for k, v := range a {
		m[k] += v
	}
	for k, v := range b {
		m[k] += v
	}
	return m
}

// Record starts the game, lets the scripted agent play and records every
// atom call into the store. It stops the game before returning.
func Record(ctx context.Context, o RecordOptions) (RunStats, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	s, err := episodes.Open(o.Store)
	if err != nil {
		if s, err = episodes.Init(o.Store); err != nil {
			return RunStats{}, fmt.Errorf("open or create store %s: %w", o.Store, err)
		}
	}
	dir := o.GameDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "luanti-game-*"); err != nil {
			return RunStats{}, err
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return RunStats{}, err
	}
	var g *Game
	for try := 1; ; try++ {
		g, err = Start(ctx, Config{Dir: filepath.Join(dir, fmt.Sprintf("try%d", try)), Seed: o.Seed, Nice: o.Nice, Logger: o.Logger})
		if err == nil || try == 3 || ctx.Err() != nil {
			break
		}
		o.Logger.Warn("luanti: game did not start, retrying", "try", try, "err", err)
	}
	if err != nil {
		return RunStats{}, err
	}
	defer g.Stop()
	if o.OnGame != nil {
		o.OnGame(g)
	}
	r, err := harness.NewRecorder(s, harness.Options{Frames: true, Task: "Luanti: explore, gather wood, dig down, climb out, survive", MoveKinds: []string{"go_to", "collect_drops"}, Logger: o.Logger})
	if err != nil {
		return RunStats{}, err
	}
	defer r.Close()
	c, err := NewController(g, r)
	if err != nil {
		return RunStats{}, err
	}
	c.Ctx = ctx
	if err := c.Calibrate(); err != nil {
		return RunStats{}, err
	}
	if r.NextID() == "ep_000000" {
		if err := c.Initial(); err != nil {
			return RunStats{}, err
		}
	}
	a := &Agent{C: c, Rng: rand.New(rand.NewSource(o.Seed)), Log: o.Logger}
	err = a.Play(ctx, o.Episodes)
	st := RunStats{Episodes: c.Stats.Episodes, Steps: c.Stats.Steps, Frames: c.Stats.Frames, Elapsed: c.Elapsed(), AtomOK: c.Stats.AtomOK, AtomFail: c.Stats.AtomFail}
	if err != nil && !errors.Is(err, context.Canceled) {
		return st, err
	}
	return st, nil
}
