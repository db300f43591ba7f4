package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/play"
	"github.com/mfm-project/mfm/task"
)

// goBackRun is what one run of the memory-goback task measured.
type goBackRun struct {
	run play.RunRecord
	// back is the number of steps from reaching the first goal (out) to
	// reaching the second (back), or to the end of the run when back was
	// not reached.
	back    int64
	reached bool
	notes   string
}

// playGoBack plays tasks/memory-goback.json in the real game with the
// scripted player given args and measures the way back.
func playGoBack(t *testing.T, name string, args string) goBackRun {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	var out, errb bytes.Buffer
	code := dispatch([]string{"play", "--task", "../../tasks/memory-goback.json", "--work", dir,
		"--socket", filepath.Join(dir, "play.sock"), "--agent-timeout", "2m",
		"--agent-cmd", "python3 " + scriptedAgent(t) + " " + args, "--max-turns", "40"}, &out, &errb)
	t.Logf("%s: %s", name, lastLine(out.String()))
	if code != 0 {
		t.Fatalf("%s: exit %d\n%s", name, code, errb.String())
	}
	tk, _, err := task.Load("../../tasks/memory-goback.json")
	if err != nil {
		t.Fatal(err)
	}
	r := goBackRun{run: checkRunAgainstLog(t, filepath.Join(dir, "store"), tk)}
	ms := map[string]play.MilestoneRecord{}
	for _, m := range r.run.Milestones {
		ms[m.Name] = m
	}
	if !ms["out"].Reached {
		t.Fatalf("%s: the first goal (out) was not reached: %s after %d turns", name, r.run.Termination, len(r.run.Turns))
	}
	r.reached = ms["back"].Reached
	if r.reached {
		r.back = ms["back"].StepsFromStart - ms["out"].StepsFromStart
	} else {
		r.back = int64(r.run.StepsUsed) - ms["out"].StepsFromStart
	}
	if b, err := os.ReadFile(filepath.Join(dir, "store", "mine", "notes.md")); err == nil {
		r.notes = string(b)
	}
	for _, tr := range r.run.Turns {
		t.Logf("%s turn %s: %q, %d steps", name, tr.ID, tr.Plan, tr.Steps)
	}
	return r
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndex(s, "\n")+1:]
}

// TestPlayMemoryGoBack measures what the memory is for: the scripted
// player plays memory-goback (walk 6 blocks out; then, a goal disclosed
// only there, back to the start) twice in the real game. With --notes it
// notes the start in mine/notes.md at its first turn (citing the episode)
// and goes back by what the note says, through its own procedure in
// mine/procedures; with --empty-mine (the same player, mine/ left empty)
// it does not know where the start is and searches in a spiral. The steps
// from the first goal to the second are measured in both runs (from
// run.json, checked against the logged state); the run with memory must
// take fewer. Under CI=true a missing game fails the test.
func TestPlayMemoryGoBack(t *testing.T) {
	requireLiveGame(t)
	mfmdOnPath(t)
	withMemory := playGoBack(t, "memory", "--notes --procedure")
	without := playGoBack(t, "empty-mine", "--notes --procedure --empty-mine")

	if !withMemory.reached {
		t.Fatalf("with memory: back not reached (%s)", withMemory.run.Termination)
	}
	if !strings.Contains(withMemory.notes, "start: x=") || !strings.Contains(withMemory.notes, "(ep_000000)") {
		t.Errorf("with memory: mine/notes.md does not hold the start with its episode: %q", withMemory.notes)
	}
	if without.notes != "" {
		t.Errorf("empty mine/: the player wrote notes: %q", without.notes)
	}
	usedProcedure := false
	for _, tr := range withMemory.run.Turns {
		usedProcedure = usedProcedure || strings.HasPrefix(tr.Plan, "go_back ")
	}
	if !usedProcedure {
		t.Errorf("with memory: no turn went back through the procedure in mine/procedures")
	}
	state := "reached"
	if !without.reached {
		state = "not reached, run ended " + without.run.Termination
	}
	t.Logf("memory-goback, steps from 'out' to 'back': with memory %d (%d turns, %d steps in all); empty mine/ %d, %s (%d turns, %d steps in all); ratio %.1f",
		withMemory.back, len(withMemory.run.Turns), withMemory.run.StepsUsed,
		without.back, state, len(without.run.Turns), without.run.StepsUsed, float64(without.back)/float64(withMemory.back))
	if withMemory.back >= without.back {
		t.Errorf("with memory the way back took %d steps, with an empty mine/ %d: memory did not help", withMemory.back, without.back)
	}
}
