package episodes_test

import (
	"fmt"
	"log"

	"github.com/mfm-project/mfm/episodes"
)

// Reading a store the paper's harness wrote: its newest index rows, read
// backwards, and an episode's files through the typed decoders.
func Example() {
	s, err := episodes.Open("../testdata/paper-run/store")
	if err != nil {
		log.Fatal(err)
	}
	life, err := s.CurrentLife()
	if err != nil {
		log.Fatal(err)
	}
	rows, err := episodes.TailRows(life.IndexPath(), 0, 2)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rows {
		fmt.Println(r.ID, r.Action(), r.FirstStep, r.LastStep, r.Tags)
	}
	last := rows[len(rows)-1]
	dir := life.RowDir(&last)
	action, err := episodes.ReadAction(dir)
	if err != nil {
		log.Fatal(err)
	}
	outcome, err := episodes.ReadOutcome(dir)
	if err != nil {
		log.Fatal(err)
	}
	state, err := episodes.ReadState(dir)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("call:", action.Entry.Procedure, action.Entry.Args["item"], *action.Entry.Steps)
	fmt.Println("milestones:", outcome.MilestoneTransition, "moved:", *outcome.Moved, "end state recorded:", outcome.EndState != nil)
	fmt.Println("start:", *state.Step, "health", *state.Vitals.Health, "next goal", state.Goals.Next)
	// Output:
	// ep_000076 use 3574 3575 [inventory_changed]
	// ep_000077 use_at 3575 3985 [milestone damage note]
	// call: use_at water_bucket 53
	// milestones: [water_2] moved: 2.49 end state recorded: false
	// start: 3575 health 20 next goal water_2
}

// The latest state of a paper run: it has no now/ and its outcomes no end
// state, so it is the last episode's start state.
func ExampleFindLatestState() {
	s, err := episodes.Open("../testdata/paper-run/store")
	if err != nil {
		log.Fatal(err)
	}
	latest, err := episodes.FindLatestState(s)
	if err != nil {
		log.Fatal(err)
	}
	st, err := episodes.DecodeState(latest.JSON)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(latest.Source, *st.Step)
	// Output:
	// episodes/ep_000077/state/state.json 3575
}
