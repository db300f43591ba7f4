package play

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestCollapseEvents: repeats are merged; past the limit the earlier
// lines are summarised by kind and item, so an ore dug early in a long
// raw action is still named.
func TestCollapseEvents(t *testing.T) {
	var long []string
	long = append(long, "mine_block iron_ore at 1,-150,2", "pick_up iron_lump 1")
	for i := 0; i < 30; i++ {
		long = append(long, fmt.Sprintf("mine_block stone at 1,%d,2", -151-i))
	}
	cases := []struct {
		name  string
		lines []string
		max   int
		want  []string
	}{
		{"repeats", []string{"hurt fall 2", "hurt fall 2", "eat apple +2"}, 5, []string{"hurt fall 2 (x2)", "eat apple +2"}},
		{"within the limit", []string{"a", "b"}, 2, []string{"a", "b"}},
		{"summarised", []string{"mine_block coal_ore at 1,2,3", "pick_up coal_lump 1", "pick_up coal_lump 1", "mine_block stone at 1,1,3", "x"}, 2,
			[]string{"(3 earlier events: mine_block coal_ore x1, pick_up coal_lump x2)", "mine_block stone at 1,1,3", "x"}},
	}
	for _, c := range cases {
		if got := collapse(c.lines, c.max); !slices.Equal(got, c.want) {
			t.Errorf("%s: collapse = %q, want %q", c.name, got, c.want)
		}
	}
	got := collapse(long, maxEventLines)
	if len(got) != maxEventLines+1 || !strings.Contains(got[0], "mine_block iron_ore x1") || !strings.Contains(got[0], "pick_up iron_lump x1") || !strings.HasPrefix(got[0], "(8 earlier events:") {
		t.Errorf("a long action's events: %q", got)
	}
}

// TestHazardWarning: the state's hazard (water, lava, a cave close by)
// is a [WARN] line of the turn block.
func TestHazardWarning(t *testing.T) {
	f := newFixture(t, logTask, Options{})
	st := f.world.State()
	st.Extra = map[string]any{"hazard": "lava ahead, 2 blocks away at 3,-140,5"}
	b := &blockBuilder{turn: &TurnRecord{ID: "status"}, before: st}
	block := f.sess.renderBlock(b, st)
	if !strings.Contains(block, "[WARN] lava ahead, 2 blocks away at 3,-140,5\n") {
		t.Errorf("no hazard warning in:\n%s", block)
	}
	st.Extra = map[string]any{"hazard": ""}
	if block := f.sess.renderBlock(b, st); strings.Contains(block, "[WARN]") {
		t.Errorf("a warning without a hazard:\n%s", block)
	}
}
