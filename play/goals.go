package play

import (
	"slices"

	"github.com/mfm-project/mfm/harness"
	"github.com/mfm-project/mfm/task"
)

// Recording is a World whose episodes go through a harness.Recorder the
// session can reach: the session has the recorder name the task's goals
// in the episodes that reach them.
type Recording interface {
	Recorder() *harness.Recorder
}

// markGoals has the world's recorder add "goal:NAME" (harness.GoalPrefix)
// to the recorded state's milestones from the step where the task's
// milestone NAME is first reached, so the episode that reaches it carries
// it in its milestone transition and as a tag (q/tag:goal:log). A tracker
// of its own evaluates every step as it is recorded, on the same states
// and events the session's tracker reads back from steps.jsonl. Goals
// that already hold at the start are reached in no episode and are left
// out.
func (s *Session) markGoals(start harness.State) {
	rw, ok := s.opt.World.(Recording)
	if !ok || rw.Recorder() == nil {
		return
	}
	tr := task.NewTracker(s.opt.Task)
	tr.SetStart(start)
	var atStart []string
	for _, r := range tr.Observe(task.Observation{Step: start.Step, State: start}) {
		atStart = append(atStart, r.Name)
	}
	rw.Recorder().SetMilestoneHook(func(st harness.Step) []string {
		tr.Observe(task.Observation{Step: st.State.Step, State: st.State, Events: st.Events})
		var names []string
		for _, r := range tr.Reached() {
			if !slices.Contains(atStart, r.Name) {
				names = append(names, harness.GoalPrefix+r.Name)
			}
		}
		return names
	})
}

// Recorder is the recorder the sim records through.
func (w *SimWorld) Recorder() *harness.Recorder { return w.R }
