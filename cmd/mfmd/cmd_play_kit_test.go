package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/mfm-project/mfm/play"
	"github.com/mfm-project/mfm/task"
)

// TestPlayKitLive plays probe-planks in the real game: the player starts
// with the task's start kit (2 tree) and nothing else, as the logged
// initial state shows, and crafts the planks from it. Under CI=true a
// missing game fails the test.
func TestPlayKitLive(t *testing.T) {
	requireLiveGame(t)
	mfmdOnPath(t)
	const taskFile = "../../tasks/probe-planks.json"
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := dispatch([]string{"play", "--task", taskFile, "--work", dir, "--socket", filepath.Join(dir, "play.sock"),
		"--agent-cmd", "echo 'craft item=wood n=4'", "--max-turns", "3"}, &out, &errb)
	t.Logf("stdout:\n%s", out.String())
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	tk, _, err := task.Load(taskFile)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "store", "episodes", "ep_000000", "state", "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var initial struct {
		Inventory map[string]int `json:"inventory"`
	}
	if err := json.Unmarshal(b, &initial); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(initial.Inventory, tk.StartKit) {
		t.Errorf("the logged start inventory is %v, want exactly the task's kit %v", initial.Inventory, tk.StartKit)
	}
	run := checkRunAgainstLog(t, filepath.Join(dir, "store"), tk)
	if run.Termination != play.EndDone {
		t.Errorf("run ended %s after %d turns, want done (planks crafted from the kit)", run.Termination, len(run.Turns))
	}
}
