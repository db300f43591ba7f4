package main

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mfm-project/mfm/eval"
)

// TestEvalResumeAfterKill runs a small experiment on the sim world, kills
// mfmd eval (and its plays) with SIGKILL while a unit is running, and
// runs it again: the units finished before the kill are not redone
// (their result.json is the same file), the rest finish, and the report
// has its tables and plots.
func TestEvalResumeAfterKill(t *testing.T) {
	mfmdOnPath(t)
	bin, err := exec.LookPath("mfmd")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	gate := filepath.Join(dir, "gate")
	tasks, err := filepath.Abs("../../examples/eval/sim-logs/tasks")
	if err != nil {
		t.Fatal(err)
	}
	chain, err := filepath.Abs("../../examples/eval/sim-logs/chain.json")
	if err != nil {
		t.Fatal(err)
	}
	// the agent holds every play after the first finished unit until the
	// gate exists: the test kills the experiment there
	agent := "if ls " + out + "/runs/*/*/*/result.json >/dev/null 2>&1; then while [ ! -e " + gate + " ]; do sleep 0.05; done; fi; python3 " + scriptedAgent(t) + " --print --notes"
	cfg := map[string]any{
		"name": "resume", "world": "sim", "tasks_dir": tasks,
		"target": []string{"sim-logs"}, "related": []string{"sim-find-tree"},
		"conditions": []string{"no-prior", "related"}, "ablations": []string{"direct", "no-consolidation"},
		"consolidate_every": 2, "chain": chain,
		"seeds": []int{1, 2}, "source_steps": 40, "target_budget": 40,
		"agent_cmd": agent, "agent_timeout": "2m",
	}
	b, _ := json.Marshal(cfg)
	cfgPath := filepath.Join(dir, "experiment.json")
	if err := os.WriteFile(cfgPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := eval.LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	units := c.Plan()

	cmd := exec.Command(bin, "eval", "--config", cfgPath, "--out", out, "--mfmd", bin)
	var first bytes.Buffer
	cmd.Stdout, cmd.Stderr = &first, &first
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	finished := func() []string {
		var ids []string
		for _, u := range units {
			if _, err := os.Stat(filepath.Join(out, "runs", u.ID, eval.ResultName)); err == nil {
				ids = append(ids, u.ID)
			}
		}
		return ids
	}
	// wait until a unit has finished and the next one has started
	deadline := time.After(2 * time.Minute)
	for {
		done := finished()
		if len(done) > 0 && len(done) < len(units) {
			if _, err := os.Stat(filepath.Join(out, "runs", units[len(done)].ID, "work")); err == nil {
				break
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("mfmd eval ended before the kill (%v):\n%s", err, first.String())
		case <-deadline:
			t.Fatalf("no unit finished:\n%s", first.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-exited
	before := map[string][]byte{}
	stamps := map[string]time.Time{}
	for _, id := range finished() {
		p := filepath.Join(out, "runs", id, eval.ResultName)
		before[id], _ = os.ReadFile(p)
		fi, _ := os.Stat(p)
		stamps[id] = fi.ModTime()
	}
	if len(before) == 0 || len(before) == len(units) {
		t.Fatalf("killed with %d of %d units finished", len(before), len(units))
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}

	var stdout, stderr bytes.Buffer
	if code := dispatch([]string{"eval", "--config", cfgPath, "--out", out, "--mfmd", bin}, &stdout, &stderr); code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	for id, b := range before {
		p := filepath.Join(out, "runs", id, eval.ResultName)
		now, _ := os.ReadFile(p)
		fi, _ := os.Stat(p)
		if !bytes.Equal(now, b) || !fi.ModTime().Equal(stamps[id]) {
			t.Errorf("%s was redone", id)
		}
		if !strings.Contains(stdout.String(), id+": finished before") {
			t.Errorf("progress does not say %s finished before:\n%s", id, stdout.String())
		}
	}
	if got := finished(); len(got) != len(units) {
		t.Fatalf("%d of %d units finished after the resume", len(got), len(units))
	}
	results, err := eval.Finished(c, out)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range results {
		u := res.Unit
		if u.Kind == eval.KindTarget && u.Condition == eval.Related {
			pv := res.Provenance
			if pv.ArtifactSHA256 == "" || pv.ManifestSHA256 == "" || len(pv.SourceTasks) == 0 || pv.SourceSteps < 40 || pv.AgentSeed != u.Seed || pv.Termination == "" {
				t.Errorf("%s: provenance %+v", u.ID, pv)
			}
		}
		if u.Kind == eval.KindTarget {
			// every target run is scored on its store against the chain
			if a := res.Audit; a == nil || a.Scores == nil || a.Scores.Planned != 3 || a.Refused != "" {
				t.Errorf("%s: audit %+v", u.ID, a)
			}
			// the no-consolidation arm (and direct) never consolidates, the others do
			consolidated := false
			for _, p := range res.Runs {
				consolidated = consolidated || len(p.Run.Consolidations) > 0
			}
			if want := u.Ablation == ""; consolidated != want {
				t.Errorf("%s: consolidated %v, want %v", u.ID, consolidated, want)
			}
		}
		if u.Kind == eval.KindSource && (res.Steps < 40 || len(res.Provenance.SourceTasks) == 0) {
			t.Errorf("%s: %d steps (budget 40), tasks %v", u.ID, res.Steps, res.Provenance.SourceTasks)
		}
	}
	report, err := os.ReadFile(filepath.Join(out, "report", eval.ReportName))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| no-prior | 2 | 0 |", "| related | 2 | 0 |", "| related+direct | 2 | 0 |", "## related+direct",
		"| related+no-consolidation | 2 | 0 |", "## Transfer contrasts", "| WGP | 2 |", "| VMP | 2 |", "## Ablations"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	for _, name := range []string{eval.MilestonesPlot, eval.ContrastsPlot} {
		f, err := os.Open(filepath.Join(out, "report", name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(f); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		f.Close()
	}
}
