// Command luanti-agent starts a headless Luanti game and lets the scripted
// agent play, recording every atom call as an episode into a store:
//
//	go run ./examples/luanti/cmd/luanti-agent --store DIR --episodes N
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/luanti"
)

func main() {
	store := flag.String("store", "", "store directory (created if missing)")
	n := flag.Int("episodes", 50, "stop after this many episodes (0: until Ctrl-C)")
	seed := flag.Int64("seed", luanti.DefaultSeed, "map seed (5: a deciduous forest at spawn)")
	keep := flag.String("game-dir", "", "keep the game's world and logs here (default: a temporary directory)")
	flag.Parse()
	if *store == "" {
		fmt.Fprintln(os.Stderr, "luanti-agent: --store DIR is required")
		os.Exit(2)
	}
	// A new store declares Luanti's axes (north +z, nodes centred on whole
	// numbers), so its maps and grid cells follow the game's.
	if _, err := episodes.Open(*store); err != nil {
		s, err := episodes.Init(*store)
		if err == nil {
			err = s.SetAxes(episodes.LuantiAxes)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "luanti-agent:", err)
			os.Exit(1)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, err := luanti.Record(ctx, luanti.RecordOptions{Store: *store, Episodes: *n, Seed: *seed, GameDir: *keep, Logger: slog.Default()})
	if err != nil {
		fmt.Fprintln(os.Stderr, "luanti-agent:", err)
		os.Exit(1)
	}
	fmt.Println(st)
}
