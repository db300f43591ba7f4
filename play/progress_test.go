package play

import (
	"strings"
	"testing"
)

// TestProgressDisclosure: Progress discloses the milestones the turn
// block does: all of them for an unordered task, the reached ones and
// the next for an ordered one.
func TestProgressDisclosure(t *testing.T) {
	ordered := strings.Replace(logTask, `"budget": 200,`, `"budget": 200, "ordered": true,`, 1)
	for _, c := range []struct {
		name             string
		task             string
		before, after    string // milestone names disclosed
		undBefore, undAf int
	}{
		{"unordered", logTask, "log planks sticks", "log planks sticks", 0, 0},
		{"ordered", ordered, "log", "log planks", 2, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.task, Options{})
			names := func(p Progress) string {
				var n []string
				for _, m := range p.Milestones {
					n = append(n, m.Name)
				}
				return strings.Join(n, " ")
			}
			p := f.sess.Progress()
			if names(p) != c.before || p.Undisclosed != c.undBefore || p.Frame != "" || p.Turns != 0 || p.StepsLeft != 200 {
				t.Errorf("before: %q, %d undisclosed; %+v", names(p), p.Undisclosed, p)
			}
			block := f.act(t, "go_to x=5 z=0; mine_ahead")
			p = f.sess.Progress()
			if names(p) != c.after || p.Undisclosed != c.undAf || !p.Milestones[0].Reached || p.Milestones[1].Reached {
				t.Errorf("after: %q, %d undisclosed; %+v", names(p), p.Undisclosed, p.Milestones)
			}
			if c.undAf > 0 && !strings.Contains(block, "[GOAL] 1 further goal(s), not yet disclosed") {
				t.Errorf("the block discloses otherwise:\n%s", block)
			}
		})
	}
}
