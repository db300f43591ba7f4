package play

import (
	"slices"
	"testing"
)

// TestGoalTags: the episode where a task's goal is reached carries
// goal:NAME in its milestone transition and its tags (what q/tag:goal:log
// finds), and no other episode does.
func TestGoalTags(t *testing.T) {
	f := newFixture(t, logTask, Options{})
	f.act(t, "go_to x=5 z=0; mine_ahead; craft item=wood; wait ticks=2")
	want := map[string]string{"mine_ahead": "goal:log", "craft": "goal:planks"}
	for _, r := range f.rows(t) {
		var goals []string
		for _, tag := range r.Tags {
			if len(tag) > 5 && tag[:5] == "goal:" {
				goals = append(goals, tag)
			}
		}
		kind := ""
		if r.ActionKind != nil {
			kind = *r.ActionKind
		}
		w := want[kind]
		if (w == "" && len(goals) > 0) || (w != "" && !slices.Equal(goals, []string{w})) {
			t.Errorf("%s (%s): goal tags %v, want %q; tags %v", r.ID, kind, goals, w, r.Tags)
		}
		if w != "" && !slices.Contains(r.Tags, "milestone") {
			t.Errorf("%s: tags %v lack milestone", r.ID, r.Tags)
		}
	}
	run := f.sess.Run()
	if !run.Milestones[0].Reached || !run.Milestones[1].Reached {
		t.Errorf("run milestones %+v", run.Milestones)
	}
}
