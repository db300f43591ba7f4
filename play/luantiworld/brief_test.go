package luantiworld

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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
	for _, want := range []string{
		"Yaw (degrees): 0 faces +z, 90 faces -x, 180 faces -z, 270 faces +x", // the adapter's atan2(-dx, dz)
		"(2-D: height does not count)",
		"grid.jsonl cells and map/ views use floor(x)",
		"The plan cap counts every entry at its worst-case estimate",
		"`[WARN] night`", "place torches",
		"`[NOTE] your head is inside a block`",
		"then **write your notes**", "stays mounted and `mine/` writable after the end",
		"You start holding nothing.", // the task's start kit, which the game gives
		"water, lava or a cave close by", "is named in the atom's note",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("brief lacks %q", want)
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

// TestEstimatesAgainstRecords checks the step estimates against the
// committed runs of the game (examples/runs/*/store): every fixed
// estimate covers every recorded call of its atom, and the estimates
// taken from the records (turning, select, eat: their budget is reached
// only by a failure) are not far above what a call takes.
func TestEstimatesAgainstRecords(t *testing.T) {
	indexes, _ := filepath.Glob("../../examples/runs/*/store/index.jsonl")
	if len(indexes) == 0 {
		t.Fatal("no committed runs under examples/runs")
	}
	ticks := regexp.MustCompile(`-> (\d+) ticks`)
	digDownOK := regexp.MustCompile(`^dig_down: dug (\d+) blocks, `)
	var digDown play.AtomSpec
	for _, a := range New(nil).Atoms() {
		if a.Name == "dig_down" {
			digDown = a
		}
	}
	digDowns := 0
	most, calls := map[string]int{}, map[string]int{}
	for _, p := range indexes {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var row struct {
				Kind    string `json:"action_kind"`
				Summary string `json:"summary"`
				Note    string `json:"note"`
			}
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			m := ticks.FindStringSubmatch(row.Summary)
			if row.Kind == "" || m == nil {
				continue
			}
			n, _ := strconv.Atoi(m[1])
			calls[row.Kind]++
			most[row.Kind] = max(most[row.Kind], n)
			// dig_down's estimate holds for the calls that went down as asked
			if d := digDownOK.FindStringSubmatch(row.Note); row.Kind == "dig_down" && d != nil {
				blocks, _ := strconv.Atoi(d[1])
				if est := digDown.MaxSteps(play.Args{"n": blocks}, harness.State{}); est < n {
					t.Errorf("dig_down(n=%d): estimate %d steps, but a recorded call that went down took %d", blocks, est, n)
				}
				digDowns++
			}
		}
	}
	fromRecords := map[string]bool{"look_abs": true, "look_at": true, "scan_around": true, "select": true, "eat": true}
	for _, a := range New(nil).Atoms() {
		if calls[a.Name] < 5 {
			continue
		}
		args := play.Args{}
		for _, p := range a.Params {
			args[p.Name] = p.Default
			if p.Type == play.TypeInt {
				args[p.Name] = 1
			}
		}
		if a.Name == "go_to" || a.Name == "watch" || a.Name == "dig_down" || a.Name == "pillar_up" {
			continue // depend on their arguments
		}
		est := a.MaxSteps(args, harness.State{})
		if est < most[a.Name] {
			t.Errorf("%s: estimate %d steps, but a recorded call took %d", a.Name, est, most[a.Name])
		}
		if fromRecords[a.Name] && est > 2*most[a.Name]+4 {
			t.Errorf("%s: estimate %d steps is far above the most a recorded call took (%d in %d calls)", a.Name, est, most[a.Name], calls[a.Name])
		}
		t.Logf("%s: estimate %d (%s), recorded at most %d in %d calls", a.Name, est, a.Steps, most[a.Name], calls[a.Name])
	}
	if digDowns < 5 {
		t.Errorf("only %d recorded dig_down calls that went down to check its estimate against", digDowns)
	}
	for name := range fromRecords {
		if calls[name] < 5 {
			t.Errorf("%s: only %d recorded calls to check its estimate against", name, calls[name])
		}
	}
}
