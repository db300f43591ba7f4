package luantiworld

import (
	"os"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/harness"
	"github.com/mfm-project/mfm/play"
	"github.com/mfm-project/mfm/task"
)

// exampleBrief is the committed brief of the long chain, as mfmd play
// writes it for the game with the store mounted at /mfm.
const exampleBrief = "../../examples/agent/BRIEF-techtree-steel.md"

// TestExampleBrief checks the committed example brief is what Brief
// renders now (MFM_UPDATE_BRIEF=1 rewrites it), and that it names every
// atom and the task's goals.
func TestExampleBrief(t *testing.T) {
	tk, _, err := task.Load("techtree-steel", "../../tasks")
	if err != nil {
		t.Fatal(err)
	}
	w := &World{}
	got, err := play.Brief(play.BriefInfo{Task: tk, Atoms: w.Atoms(), RawKeys: w.RawKeys(), Mount: "/mfm", Store: "/work/store", Socket: "/work/store/.mfm/play.sock"})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range w.Atoms() {
		if !strings.Contains(got, "`"+a.Name+"(") {
			t.Errorf("brief lacks atom %s", a.Name)
		}
	}
	for _, m := range tk.Milestones {
		if !strings.Contains(got, "**"+m.Name+"**") {
			t.Errorf("brief lacks goal %s", m.Name)
		}
	}
	if os.Getenv("MFM_UPDATE_BRIEF") == "1" {
		if err := os.WriteFile(exampleBrief, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(exampleBrief)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Errorf("%s is stale: run MFM_UPDATE_BRIEF=1 go test ./play/luantiworld", exampleBrief)
	}
}

// TestAtomTable checks every atom's spec is well formed and bounded.
func TestAtomTable(t *testing.T) {
	w := New(nil)
	seen := map[string]bool{}
	for _, a := range w.Atoms() {
		if seen[a.Name] || a.Doc == "" || a.MaxSteps == nil {
			t.Errorf("atom %s: duplicate, no doc or no step bound", a.Name)
		}
		seen[a.Name] = true
		args, err := a.CheckArgs(nil)
		if err != nil {
			continue // required parameters
		}
		if n := a.MaxSteps(args, harness.State{}); n <= 0 || n > 400 {
			t.Errorf("atom %s: bound %d steps with defaults", a.Name, n)
		}
	}
}
