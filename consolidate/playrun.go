package consolidate

import (
	"encoding/json"
	"os"
	"sort"

	"github.com/mfm-project/mfm/episodes"
)

// playRun is what the Monitor reads of a play run's run.json (package
// play writes it at the store's root): the milestones the session's
// tracker saw reached, with the turn and step, and each turn's episodes.
type playRun struct {
	Milestones []struct {
		Name    string `json:"name"`
		Index   int    `json:"index"`
		Reached bool   `json:"reached"`
		Step    int64  `json:"step"`
		Turn    string `json:"turn"`
	} `json:"milestones"`
	Turns []struct {
		ID      string `json:"id"`
		Entries []struct {
			Episodes []string `json:"episodes"`
		} `json:"entries"`
	} `json:"turns"`
}

// runMilestones are the current life's milestones from run.json, by the
// episode that reached them, and the order of the task's milestones.
// A milestone counts for an episode only when run.json lists the episode
// in the turn that reached it and the episode's steps hold the step: a
// run.json that is not this life's (mfmd life new moves it with its life,
// but a store may be copied or played into by hand) names turns whose
// episodes are not these.
type runMilestones struct {
	order   []string         // the task's milestones, in order
	reached map[string]int64 // milestone → step
	at      map[string][]string
	turnEps map[string]map[string]bool
}

// readRunMilestones reads run.json (nil when absent or not a play run).
func readRunMilestones(s *episodes.Store) *runMilestones {
	b, err := os.ReadFile(s.Path(episodes.RunFileName))
	if err != nil {
		return nil
	}
	var r playRun
	if json.Unmarshal(b, &r) != nil || len(r.Milestones) == 0 {
		return nil
	}
	rm := &runMilestones{reached: map[string]int64{}, at: map[string][]string{}, turnEps: map[string]map[string]bool{}}
	ms := r.Milestones
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Index < ms[j].Index })
	for _, t := range r.Turns {
		eps := map[string]bool{}
		for _, e := range t.Entries {
			for _, id := range e.Episodes {
				eps[id] = true
			}
		}
		rm.turnEps[t.ID] = eps
	}
	for _, m := range ms {
		rm.order = append(rm.order, m.Name)
		if m.Reached && m.Turn != "" {
			rm.reached[m.Name] = m.Step
			rm.at[m.Turn] = append(rm.at[m.Turn], m.Name)
		}
	}
	return rm
}

// apply adds to f (an episode of the current life) the milestones its
// steps reached (first_step is its start state's step: a milestone of
// that step was reached before it), and its subgoal (the first milestone not yet reached
// when it began) when its state records none.
func (rm *runMilestones) apply(f *Feedback) {
	if rm == nil || f.Previous {
		return
	}
	mine := false
	for turn, names := range rm.at {
		if !rm.turnEps[turn][f.Episode] {
			continue
		}
		for _, n := range names {
			if st := rm.reached[n]; st > f.FirstStep && st <= f.LastStep && !contains(f.Milestones, n) {
				f.Milestones = append(f.Milestones, n)
			}
		}
		mine = true
	}
	if f.Subgoal != "" {
		return
	}
	inRun := mine
	for _, eps := range rm.turnEps {
		inRun = inRun || eps[f.Episode]
	}
	if !inRun {
		return
	}
	for _, n := range rm.order {
		if st, ok := rm.reached[n]; !ok || st > f.FirstStep {
			f.Subgoal = n
			return
		}
	}
}
