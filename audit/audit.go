// Package audit scores recorded runs with MC-EvoBench's transfer metrics
// (appendix C): TSR over planned stage occurrences with per-stage step
// caps and the stop at the first failing stage, WGP over the task-state
// graph's execution edges (falling back to TSR for a chain without
// them), VMP over the item/tool states not already met in the first
// snapshot; the paired contrasts ΔR and GATG with Student-t intervals;
// and MFM's retrieval → retarget analysis (retarget.go). It reads stores;
// it does not record or mount them. docs/AUDIT.md describes it.
package audit

import (
	"errors"
	"fmt"
	"os"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/play"
	"github.com/mfm-project/mfm/task"
)

// Samples reads the recorded states of store s, every life in order: per
// episode its state/state.json (the start), every step's state of its
// steps.jsonl when recorded (the checks the runner makes after each
// environment step), then its outcome.json end_state when recorded. A
// sample sees its own events (a step's, or the episode's at the end) and,
// cumulative up to it: the events, the milestones (state milestones and
// outcome milestone_transition) and the items crafted ("craft ITEM N"
// events, counted as the task predicate crafted:ITEM counts them).
func Samples(s *episodes.Store) ([]Sample, error) {
	lives, err := s.Lives()
	if err != nil {
		return nil, err
	}
	var out []Sample
	var allEvents []any
	craft := task.NewTracker(&task.Task{})
	miles := []any{}
	seen := map[string]bool{}
	addMile := func(v any) {
		if id, ok := v.(string); ok && !seen[id] {
			seen[id] = true
			miles = append(miles, id)
		}
	}
	observe := func(step int64, evs []string) {
		allEvents = append(allEvents, anySlice(evs)...)
		craft.Observe(task.Observation{Step: step, Events: evs})
	}
	for _, l := range lives {
		rows, err := l.AllRows()
		if err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		for _, r := range rows {
			dir := l.RowDir(&r)
			o, err := episodes.ReadOutcome(dir)
			if err != nil {
				o = &episodes.Outcome{} // the episode's outcome is not recorded
			}
			mk := func(st map[string]any, step int64, evs []string) Sample {
				env := map[string]any{}
				for k, v := range st {
					env[k] = v
				}
				if ms, ok := st["milestones"].([]any); ok {
					for _, m := range ms {
						addMile(m)
					}
				}
				env["step"] = step
				env["life"] = l.N
				env["episode"] = r.ID
				env["tags"] = anySlice(r.Tags)
				env["events"] = anySlice(evs)
				// capacity-capped views: later appends never show through
				env["all_events"] = allEvents[:len(allEvents):len(allEvents)]
				env["milestones"] = miles[:len(miles):len(miles)]
				crafted := map[string]any{}
				for k, v := range craft.Crafted() {
					crafted[k] = v
				}
				env["crafted"] = crafted
				if _, ok := env["inventory"]; !ok {
					env["inventory"] = map[string]any{}
				}
				return Sample{Step: step, Env: env}
			}
			var start map[string]any
			if st, err := episodes.ReadState(dir); err == nil {
				if start, err = st.Fields(); err == nil {
					out = append(out, mk(start, r.FirstStep, nil))
				}
			}
			stepped := false
			err = episodes.ScanSteps(dir, func(st episodes.Step) error {
				if st.State == nil {
					return nil
				}
				fields, err := st.State.Fields()
				if err != nil {
					return nil
				}
				stepped = true
				observe(st.Step, st.Events)
				out = append(out, mk(fields, st.Step, st.Events))
				return nil
			}, nil)
			if err != nil {
				return nil, fmt.Errorf("audit: %s: %w", r.ID, err)
			}
			if !stepped {
				observe(r.LastStep, o.Events) // the steps' events are the episode's
			}
			for _, m := range o.MilestoneTransition {
				addMile(m)
			}
			var end map[string]any
			if o.EndState != nil {
				end, _ = o.EndState.Fields()
			}
			if end == nil && start != nil {
				// the paper records no end state: the start state with this
				// episode's events and milestones
				end = start
			}
			if end != nil {
				out = append(out, mk(end, r.LastStep, o.Events))
			}
		}
	}
	return out, nil
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// Support is what a store holds for a score: its index rows, the episode
// folders they name that exist, the recorded states read.
type Support struct {
	Rows            int      `json:"rows"`
	MissingFolders  []string `json:"missing_folders,omitempty"`  // episode ids the index names without a folder
	MissingFromRun  []string `json:"missing_from_run,omitempty"` // episode ids run.json names that the store lacks
	EpisodesNoState int      `json:"episodes_without_state"`
	States          int      `json:"states"`
}

// ErrUnsupported is wrapped by Score's refusal: the store cannot support
// a score.
var ErrUnsupported = errors.New("the store cannot support a score")

// CheckStore reports what store dir holds for a score and refuses (an
// error wrapping ErrUnsupported) when an episode folder that the index or
// run.json names is missing, or no state is recorded at all: a score
// over what is left would be a number about a different run.
func CheckStore(dir string) (Support, error) {
	var sup Support
	s, err := episodes.Open(dir)
	if err != nil {
		return sup, fmt.Errorf("audit: %w", err)
	}
	lives, err := s.Lives()
	if err != nil {
		return sup, fmt.Errorf("audit: %w", err)
	}
	have := map[string]bool{}
	for _, l := range lives {
		rows, err := l.AllRows()
		if err != nil {
			return sup, fmt.Errorf("audit: %w", err)
		}
		for _, r := range rows {
			sup.Rows++
			d := l.RowDir(&r)
			if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
				sup.MissingFolders = append(sup.MissingFolders, r.ID)
				continue
			}
			have[r.ID] = true
			if _, err := episodes.ReadState(d); err != nil {
				sup.EpisodesNoState++
			} else {
				sup.States++
			}
		}
	}
	for _, id := range runEpisodes(s) {
		if !have[id] {
			sup.MissingFromRun = append(sup.MissingFromRun, id)
		}
	}
	switch {
	case len(sup.MissingFolders) > 0:
		return sup, fmt.Errorf("%w: %s: %d of the %d episode folders the index names are missing (first %s); the states of the rest would score a different run",
			ErrUnsupported, dir, len(sup.MissingFolders), sup.Rows, sup.MissingFolders[0])
	case len(sup.MissingFromRun) > 0:
		return sup, fmt.Errorf("%w: %s: run.json names %d episodes the store does not hold (first %s)",
			ErrUnsupported, dir, len(sup.MissingFromRun), sup.MissingFromRun[0])
	case sup.States == 0:
		return sup, fmt.Errorf("%w: %s: no recorded states (%d index rows)", ErrUnsupported, dir, sup.Rows)
	}
	return sup, nil
}

// runEpisodes lists the episode ids run.json's turns name, if the store
// has a run.json with turns.
func runEpisodes(s *episodes.Store) []string {
	run, err := play.ReadRun(s)
	if err != nil {
		return nil
	}
	var out []string
	for _, t := range run.Turns {
		for _, e := range t.Entries {
			out = append(out, e.Episodes...)
		}
	}
	return out
}

// Score scores the run recorded in store dir against chain c, labelled
// with the store's path. It refuses (ErrUnsupported) a store that cannot
// support a score (CheckStore); episodes without a state are counted in
// the warnings.
func Score(c *Chain, dir string) (Scores, error) {
	return ScoreLabel(c, dir, dir)
}

// ScoreLabel is Score with a label (a condition: no-prior, related, …).
func ScoreLabel(c *Chain, label, dir string) (Scores, error) {
	sup, err := CheckStore(dir)
	if err != nil {
		return Scores{}, err
	}
	s, err := episodes.Open(dir)
	if err != nil {
		return Scores{}, fmt.Errorf("audit: %w", err)
	}
	smp, err := Samples(s)
	if err != nil {
		return Scores{}, err
	}
	res := c.Evaluate(label, smp)
	if sup.EpisodesNoState > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d of %d episodes have no recorded state", sup.EpisodesNoState, sup.Rows))
	}
	return res, nil
}
