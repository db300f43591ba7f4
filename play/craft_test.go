package play

import (
	"strings"
	"testing"
)

// TestCraftCountsItems: craft's n is how many items are wanted, made in
// whole recipe runs; the note says how many runs of what were made, and a
// failure says how many were made and what was missing.
func TestCraftCountsItems(t *testing.T) {
	f := newFixture(t, logTask, Options{})
	if err := f.world.GiveKit(map[string]int{"tree": 3}); err != nil {
		t.Fatal(err)
	}
	block := f.act(t, "craft item=wood n=5")
	if want := "[ACTION] craft(item=wood,n=5) -> ok: crafted 8 wood from 2 tree (2 runs of 1 tree → 4 wood)"; !strings.Contains(block, want) {
		t.Errorf("want %q in:\n%s", want, block)
	}
	if inv := f.world.State().Inventory; inv["wood"] != 8 || inv["tree"] != 1 {
		t.Errorf("after craft wood n=5 from 3 tree: %v, want 8 wood, 1 tree", inv)
	}
	block, _, _ = f.sess.Act(t.Context(), "craft item=wood n=9", "test")
	if want := "-> FAILED: made 4 of 9 wood (1 run of 1 tree → 4 wood), then missing 1 tree"; !strings.Contains(block, want) {
		t.Errorf("want %q in:\n%s", want, block)
	}
	block, _, _ = f.sess.Act(t.Context(), "craft item=pick_wood n=1", "test")
	if want := "-> FAILED: missing 2 stick (one run takes 2 stick, 3 wood → 1 pick_wood)"; !strings.Contains(block, want) {
		t.Errorf("want %q in:\n%s", want, block)
	}
	for _, a := range (&SimWorld{}).Atoms() {
		if a.Name == "craft" && !strings.Contains(a.Doc, "n counts items") {
			t.Errorf("the sim's craft doc does not say what n counts: %q", a.Doc)
		}
	}
}
