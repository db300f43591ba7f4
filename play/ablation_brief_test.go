package play

import (
	"strings"
	"testing"

	"github.com/mfm-project/mfm/task"
)

// TestBriefAndBlockUnderAblation: the brief and the turn block name only
// what the ablated mount serves. Flat hides index.jsonl, grid.jsonl, q/
// and map/ (the brief describes logs.txt and episodes/, the block has no
// [MAP] lines); no observations hides the frames and views (no [FRAME]);
// no procedures hides mine/procedures/.
func TestBriefAndBlockUnderAblation(t *testing.T) {
	tk, err := task.Parse([]byte(logTask))
	if err != nil {
		t.Fatal(err)
	}
	w := &SimWorld{}
	cases := []struct {
		name        string
		abl         BriefAblation
		frozen      bool
		absent, has []string
	}{
		{"full", BriefAblation{}, true, nil,
			[]string{"/mfm/index.jsonl", "/mfm/grid.jsonl", "/mfm/q/<query>/", "/mfm/map/here.txt", "`[MAP]`", "`[FRAME]`", "frames/*.png", "mine/procedures/NAME.py"}},
		{"flat", BriefAblation{Flat: true}, true,
			[]string{"index.jsonl", "grid.jsonl", "/q/", "q/tag:", "map/", "[MAP]", "the map and"},
			[]string{"/mfm/logs.txt", "/mfm/episodes/ep_NNNNNN/", "`goal:NAME`", "**flat**", "`[FRAME]`", "frames/*.png"}},
		{"no-observations", BriefAblation{NoObservations: true}, true,
			[]string{"[FRAME]", "frames/*.png", "observation/image.png", "sheet.png", "map/here.txt", "look at the frame"},
			[]string{"/mfm/index.jsonl", "/mfm/q/<query>/", "`[MAP]`"}},
		{"no-procedures frozen", BriefAblation{NoProcedures: true}, true,
			[]string{"mine/procedures/NAME.py"}, []string{"mine/notes.md", "mine/reflexes/NAME.py"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			brief, err := Brief(BriefInfo{Task: tk, Atoms: w.Atoms(), RawKeys: w.RawKeys(), Mount: "/mfm", MineFrozen: tc.frozen, Ablation: tc.abl})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.absent {
				if strings.Contains(brief, s) {
					t.Errorf("the brief names %q, which the mount hides", s)
				}
			}
			for _, s := range tc.has {
				if !strings.Contains(brief, s) {
					t.Errorf("the brief lacks %q", s)
				}
			}
		})
	}

	// the turn block: [MAP] lines only without the flat ablation
	for _, flat := range []bool{false, true} {
		f := newFixture(t, logTask, Options{Flat: flat})
		block := f.act(t, "go_to x=5 z=0; mine_ahead")
		if got := strings.Contains(block, "[MAP]"); got == flat {
			t.Errorf("flat=%v: [MAP] lines %v:\n%s", flat, got, block)
		}
	}
}
