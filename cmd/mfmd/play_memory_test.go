package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/consolidate"
	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/harness"
	"github.com/mfm-project/mfm/play"
	"github.com/mfm-project/mfm/task"
)

const pickaxeTask = `{"name": "sim-pickaxe", "instruction": "craft a wooden pickaxe", "budget": 400, "ordered": true, "milestones": [
	{"name": "log", "when": "tree>=1"}, {"name": "planks", "when": "wood>=1"}, {"name": "sticks", "when": "stick>=1"}, {"name": "pickaxe", "when": "pick_wood>=1"}]}`

// playLife plays one life of the sim world in s with the memory loop:
// each plan in turn through the session, as mfmd act sends them.
func playLife(t *testing.T, s *episodes.Store, l *consolidate.Loop, every int, plans func(i int, block string) string) (*play.Session, []string) {
	t.Helper()
	tk, err := task.Parse([]byte(pickaxeTask))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := harness.NewRecorder(s, harness.Options{Frames: true, Task: tk.Instruction})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	w, err := play.NewSimWorld(rec)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := play.NewSession(play.Options{Task: tk, Store: s, World: w, Adaptor: loopMemory{l}, ConsolidateEvery: every})
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	block := ""
	for i := 0; sess.Termination() == play.EndRunning; i++ {
		if i == 20 {
			t.Fatalf("20 turns and not done:\n%s", block)
		}
		block, _, err = sess.Act(context.Background(), plans(i, block), "test")
		if err != nil {
			t.Fatalf("turn %d: %v\n%s", i+1, err, block)
		}
		blocks = append(blocks, block)
	}
	return sess, blocks
}

// Two lives through the session with the memory loop: the first fails,
// explores and succeeds; consolidation during it makes the successful
// run a skill of K and a procedure in mine/procedures; in the second,
// the first failure's block offers that skill (eq. 7), the next plan
// calls the procedure by name through the session, and K counts the use.
func TestPlayMemoryTwoLives(t *testing.T) {
	s, err := episodes.Init(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	l := &consolidate.Loop{Store: s, Config: consolidate.DefaultConfig()}
	life1 := []string{"craft item=pick_wood", "mine_ahead", "go_to x=0 z=5; mine_ahead", "go_to x=5 z=0; mine_ahead",
		"craft item=wood", "craft item=stick", "craft item=pick_wood"}
	sess, _ := playLife(t, s, l, 3, func(i int, _ string) string { return life1[i] })
	run1 := sess.Run()
	if run1.Termination != play.EndDone || len(run1.Turns) != 7 {
		t.Fatalf("life 1: %s after %d turns", run1.Termination, len(run1.Turns))
	}
	if c := run1.Consolidations; len(c) != 3 || c[0].After != "t0003" || c[1].After != "t0006" || c[2].After != "t0007" || c[2].Reason != "end of the run" {
		t.Fatalf("consolidations %+v", c)
	}
	k, err := consolidate.ReadK(s)
	if err != nil {
		t.Fatal(err)
	}
	var skill *consolidate.KEntry
	for _, e := range k.Entries {
		if e.Kind == consolidate.KindSkill && e.Verify == "milestone pickaxe" && e.State == consolidate.KActive {
			skill = e
		}
	}
	if skill == nil {
		t.Fatalf("no active skill verifying milestone pickaxe in K: %s", consolidate.KJSON(k))
	}
	// its evidence is the successful run: mine_ahead (ep_000006) to the
	// pickaxe (ep_000009), the go_to before it (ep_000005) leads there
	var refs []string
	for _, r := range skill.Support {
		refs = append(refs, r.ID)
	}
	if got := strings.Join(refs, " "); got != "ep_000006 ep_000007 ep_000008 ep_000009" {
		t.Errorf("skill support %s", got)
	}
	proc, err := os.ReadFile(s.Path("mine", "procedures", "skill_pickaxe.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# mfm-skill: " + skill.ID, "# mfm-evidence: ep_000006 ep_000007 ep_000008 ep_000009", "# mfm-verify: milestone pickaxe",
		`{"args":{"within":1,"x":5,"z":0},"procedure":"go_to"}`, `{"args":{"item":"pick_wood","n":1},"procedure":"craft"}`,
	} {
		if !strings.Contains(string(proc), want) {
			t.Errorf("skill_pickaxe.sh lacks %q:\n%s", want, proc)
		}
	}

	w, err := s.OpenWriter()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.NewLife(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var offered string
	sess, blocks := playLife(t, s, l, 3, func(i int, block string) string {
		if i == 0 {
			return "craft item=pick_wood"
		}
		for _, ln := range strings.Split(block, "\n") {
			if _, after, ok := strings.Cut(ln, "; call "); ok && strings.HasPrefix(ln, "[MEMORY] skill ") {
				offered = strings.Fields(strings.TrimSuffix(after, ";"))[0]
				offered = strings.TrimSuffix(offered, ";")
				return offered
			}
		}
		t.Fatalf("turn %d: no skill offered:\n%s", i+1, block)
		return ""
	})
	run2 := sess.Run()
	if offered != "skill_pickaxe" || run2.Termination != play.EndDone || len(run2.Turns) != 2 {
		t.Fatalf("life 2: called %q, %s after %d turns\n%s", offered, run2.Termination, len(run2.Turns), strings.Join(blocks, "\n"))
	}
	// the skill's evidence is cited where it is now: in life 1
	if !strings.Contains(blocks[0], "[MEMORY] for this failure (call=craft,failure=MISSING_TOOL,gui_open=false,item=stick,subgoal=log,budget=120;") ||
		!strings.Contains(blocks[0], "verify milestone pickaxe (0.80, previous/life_1/episodes/ep_000006 previous/life_1/episodes/ep_000007 previous/life_1/episodes/ep_000008 +1)") {
		t.Errorf("block 1:\n%s", blocks[0])
	}
	m := run2.Turns[0].Memory
	if m == nil || m.UsedBy != "t0002" || len(m.Used) != 1 || m.Used[0] != skill.ID {
		t.Errorf("life 2 turn 1 memory %+v", m)
	}
	if run2.StepsUsed >= run1.StepsUsed {
		t.Errorf("life 2 took %d steps, life 1 %d", run2.StepsUsed, run1.StepsUsed)
	}
	if proc, _ := os.ReadFile(s.Path("mine", "procedures", "skill_pickaxe.sh")); !strings.Contains(string(proc), "# mfm-evidence: previous/life_1/episodes/ep_000006 ") {
		t.Errorf("life 2's skill_pickaxe.sh does not cite life 1's episodes:\n%s", proc)
	}
	k, _ = consolidate.ReadK(s)
	for _, e := range k.Entries {
		if e.ID == skill.ID && (e.Used != 1 || e.Retrieved != 1) {
			t.Errorf("K's %s: retrieved %d, used %d; want 1 and 1", e.ID, e.Retrieved, e.Used)
		}
		for _, r := range e.Support {
			if r.Life == 1 && !r.Previous {
				t.Errorf("K's %s cites %s of life 1 as if it were in the current life", e.ID, r.ID)
			}
		}
	}
}

// Eq. 8 through the session: after a failed call the --llm-cmd command
// gets the Adaptor prompt on stdin and answers a repaired suffix; the
// block shows it checked (never run), the record keeps it, and the next
// plan that begins with it counts as using it. A suffix naming no known
// call is shown as refused; a failing command is reported, not fatal.
func TestPlayAdaptorLLMSuffix(t *testing.T) {
	dir := t.TempDir()
	s, err := episodes.Init(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	prompt := filepath.Join(dir, "prompt.txt")
	answer := filepath.Join(dir, "answer.json")
	l := &consolidate.Loop{Store: s, Config: consolidate.DefaultConfig(), LLM: &consolidate.LLM{Cmd: "cat > " + prompt + "; cat " + answer}}
	write := func(a string) {
		if err := os.WriteFile(answer, []byte(a), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"kept_prefix": [], "repaired_suffix": [{"entry": "go_to x=5 z=0", "repair_source": "temporary"}, {"entry": "mine_ahead"}, {"entry": "craft item=wood"}], "active_remedies_used": []}`)
	var blocks []string
	var p1 []byte
	plans := []string{"craft item=wood", "go_to x=5 z=0; mine_ahead; craft item=wood", "craft item=pick_wood", "mine_ahead; craft item=pick_wood", "craft item=stick", "craft item=pick_wood"}
	sess, _ := playLife(t, s, l, 0, func(i int, block string) string {
		blocks = append(blocks, block)
		switch i {
		case 1:
			p1, _ = os.ReadFile(prompt)
		case 2:
			write(`{"repaired_suffix": [{"entry": "fly_to x=1"}]}`)
		case 3:
			l.LLM.Cmd = "echo the model is down >&2; exit 3"
		}
		return plans[i]
	})
	// 15 = go_to 5 blocks + 3, mine_ahead ≤5, craft 1 item ≤2
	if b1 := blocks[1]; !strings.Contains(b1, "[MEMORY] repaired suffix (checked, ≤15 steps, not run): go_to x=5 z=0; mine_ahead; craft item=wood") {
		t.Errorf("block 1:\n%s", b1)
	}
	for _, want := range []string{consolidate.PromptAdapt, "Task goal: craft a wooden pickaxe", "Current subgoal: log", "- craft(item=wood) [failed]",
		`Frozen prefix: []`, `- temporary: craft ended in MISSING_TOOL ("craft: missing 1 tree (one run takes 1 tree → 4 wood)")`, "KNOWN CALLS: craft, dig_down, go_to, look_abs, mine_ahead, wait"} {
		if !strings.Contains(string(p1), want) {
			t.Errorf("the prompt lacks %q:\n%s", want, p1)
		}
	}
	run := sess.Run()
	m := run.Turns[0].Memory
	if m == nil || m.Suffix != "go_to x=5 z=0; mine_ahead; craft item=wood" || m.SuffixSteps != 15 || !m.SuffixUsed || m.UsedBy != "t0002" {
		t.Errorf("turn 1 memory %+v", m)
	}
	if m := run.Turns[2].Memory; m == nil || !strings.Contains(m.SuffixRefused, `no atom or procedure "fly_to"`) || m.SuffixUsed {
		t.Errorf("turn 3 memory %+v", m)
	}
	if m := run.Turns[3].Memory; m == nil || !strings.Contains(m.LLMError, "the model is down") {
		t.Errorf("turn 4 memory %+v", m)
	}
}
