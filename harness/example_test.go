package harness_test

import (
	"fmt"
	"log"
	"os"
	"time"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/harness"
)

// A harness creates a store, records its agent's episodes with a
// Recorder, and any reader gets them back through the episodes package's
// decoders.
func ExampleRecorder() {
	dir, err := os.MkdirTemp("", "mfm-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// Create the store (episodes.Open opens an existing one) and record.
	s, err := episodes.Init(dir)
	if err != nil {
		log.Fatal(err)
	}
	clock := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	r, err := harness.NewRecorder(s, harness.Options{Frames: true, Clock: clock})
	if err != nil {
		log.Fatal(err)
	}
	start := harness.State{Step: 0, X: 10.5, Y: 64, Z: -3.5, Health: 20, Inventory: map[string]int{}}
	if _, err := r.Initial(start, nil); err != nil {
		log.Fatal(err)
	}
	if err := r.Begin(harness.Call{Kind: "go_to", Args: []harness.Arg{{Name: "x", Value: 14.5}, {Name: "z", Value: -3.5}}}); err != nil {
		log.Fatal(err)
	}
	for i := int64(1); i <= 4; i++ {
		st := start
		st.Step, st.X = i, start.X+float64(i)
		if i == 4 {
			st.Inventory = map[string]int{"log": 1}
		}
		if err := r.Step(harness.Step{Action: map[string]any{"forward": 1}, State: st}); err != nil {
			log.Fatal(err)
		}
	}
	r.Note("go_to: arrived")
	row, err := r.End()
	if err != nil {
		log.Fatal(err)
	}
	if err := r.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Println(row.ID, row.Summary, row.Tags)

	// Read the episode back: its directory from its index row, then the
	// typed decoders of its files.
	life, err := s.CurrentLife()
	if err != nil {
		log.Fatal(err)
	}
	ep := life.RowDir(&row)
	action, err := episodes.ReadAction(ep)
	if err != nil {
		log.Fatal(err)
	}
	state, err := episodes.ReadState(ep)
	if err != nil {
		log.Fatal(err)
	}
	outcome, err := episodes.ReadOutcome(ep)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("action:", action.Call, action.Entry.Procedure, *action.Entry.Steps)
	fmt.Println("start:", *state.Step, state.Pos.X)
	fmt.Println("outcome:", *outcome.Moved, outcome.InventoryDelta, outcome.Notes, "ends at", outcome.EndState.Pos.X)
	err = episodes.ScanSteps(ep, func(st episodes.Step) error {
		fmt.Println("step", st.Step, string(st.Action), st.State.Pos.X)
		return nil
	}, nil)
	if err != nil {
		log.Fatal(err)
	}

	// The latest state is the last episode's end (the recorder also keeps
	// now/state.json, which comes first).
	latest, err := episodes.FindLatestState(s)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("latest from", latest.Source)
	// Output:
	// ep_000001 [ACTION] go_to(x=14.5,z=-3.5) -> 4 ticks: moved 4.0, inv {'log': 1} [inventory_changed note]
	// action: go_to(x=14.5,z=-3.5) go_to 4
	// start: 0 10.5
	// outcome: 4 map[log:1] [go_to: arrived] ends at 14.5
	// step 1 {"forward": 1} 11.5
	// step 2 {"forward": 1} 12.5
	// step 3 {"forward": 1} 13.5
	// step 4 {"forward": 1} 14.5
	// latest from now/state.json
}
