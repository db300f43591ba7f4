package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/harness"
	"github.com/mfm-project/mfm/luanti"
	"github.com/mfm-project/mfm/play"
	"github.com/mfm-project/mfm/task"
)

// scriptedAgent is the scripted player's path.
func scriptedAgent(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../examples/agent/scripted_agent.py")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// mfmdOnPath puts an "mfmd" that runs this test binary's main on PATH
// (testscript.Main dispatches on the program name).
func mfmdOnPath(t *testing.T) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(bin, "mfmd")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// checkRunAgainstLog checks run.json's milestones against the milestones
// evaluated afresh on every logged step of the store.
func checkRunAgainstLog(t *testing.T, storeDir string, tk *task.Task) play.RunRecord {
	t.Helper()
	st, err := episodes.Open(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	run, err := play.ReadRun(st)
	if err != nil {
		t.Fatal(err)
	}
	life, _ := st.CurrentLife()
	rows, err := life.AllRows()
	if err != nil {
		t.Fatal(err)
	}
	var seq []task.Observation
	for _, r := range rows {
		if r.Kind == "initial" {
			b, err := os.ReadFile(filepath.Join(life.EpisodeDir(r.ID), "state", "state.json"))
			if err != nil {
				t.Fatal(err)
			}
			seq = append(seq, task.Observation{Step: r.FirstStep, State: stateOf(t, b)})
			continue
		}
		err := readJSONL(filepath.Join(life.EpisodeDir(r.ID), "steps.jsonl"), func(step int64, state []byte, events []string) {
			s := stateOf(t, state)
			s.Step = step
			seq = append(seq, task.Observation{Step: step, State: s, Events: events})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]int64{}
	for _, r := range task.Evaluate(tk, seq) {
		want[r.Name] = r.Step
	}
	for _, m := range run.Milestones {
		step, ok := want[m.Name]
		if ok != m.Reached || (ok && step != m.Step) {
			t.Errorf("milestone %s in run.json: reached %v at %d; the logged state: reached %v at %d", m.Name, m.Reached, m.Step, ok, step)
		}
	}
	last := seq[len(seq)-1].Step
	if int64(run.StepsUsed) != last-run.StartStep {
		t.Errorf("steps_used %d, the log: %d steps since %d", run.StepsUsed, last-run.StartStep, run.StartStep)
	}
	return run
}

func stateOf(t *testing.T, b []byte) (s harnessState) {
	t.Helper()
	var m map[string]any
	if err := jsonUnmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return play.StateFromJSON(m)
}

// TestPlayAgentCmdSim plays a task harness-driven in the sim world: the
// scripted agent prints each plan, mfmd play runs it, run.json agrees
// with the log.
func TestPlayAgentCmdSim(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := dispatch([]string{"play", "--task", "../../tasks/smoke-walk.json", "--world", "sim", "--work", dir,
		"--socket", filepath.Join(dir, "play.sock"),
		"--agent-cmd", "python3 " + scriptedAgent(t) + " --print", "--max-turns", "8"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	tk, _, err := task.Load("../../tasks/smoke-walk.json")
	if err != nil {
		t.Fatal(err)
	}
	run := checkRunAgainstLog(t, filepath.Join(dir, "store"), tk)
	if run.Termination != play.EndDone || len(run.Turns) != 2 {
		t.Fatalf("run: %s after %d turns\n%s", run.Termination, len(run.Turns), out.String())
	}
	for _, tr := range run.Turns {
		if tr.Source != "agent-cmd" || !strings.HasPrefix(tr.Plan, "go_to ") {
			t.Errorf("turn %+v", tr)
		}
	}
	for _, f := range briefFiles {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || !bytes.Contains(b, []byte(tk.Instruction)) || !bytes.Contains(b, []byte("mfmd act")) {
			t.Errorf("%s: %v", f, err)
		}
	}
	if !strings.Contains(out.String(), "Run ended: done. 2 of 2 milestones") {
		t.Errorf("stdout: %s", out.String())
	}
}

// TestActCommand drives a session with mfmd act: listing, refusals
// (exit 1, nothing recorded), a turn, and no session.
func TestActCommand(t *testing.T) {
	dir := t.TempDir()
	taskFile := filepath.Join(dir, "log.json")
	if err := os.WriteFile(taskFile, []byte(`{"name": "log", "instruction": "get a log", "budget": 500, "milestones": [{"name": "log", "when": "tree>=1"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "play.sock")
	done := make(chan int, 1)
	var pout, perr bytes.Buffer
	go func() {
		done <- dispatch([]string{"play", "--task", taskFile, "--world", "sim", "--work", dir, "--socket", sock, "--linger", "10s"}, &pout, &perr)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := play.Call(sock, play.Request{Op: "status"}, time.Second); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no session on %s: %s %s", sock, pout.String(), perr.String())
		}
		select {
		case code := <-done:
			t.Fatalf("play exited %d: %s", code, perr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	act := func(args ...string) (int, string, string) {
		var o, e bytes.Buffer
		code := dispatch(append([]string{"act", "--socket", sock}, args...), &o, &e)
		return code, o.String(), e.String()
	}
	if code, o, _ := act("--list"); code != 0 || !strings.Contains(o, "go_to(x:number, z:number, within:number=1)") {
		t.Errorf("--list: %d %s", code, o)
	}
	rows := func() int {
		st, _ := episodes.Open(filepath.Join(dir, "store"))
		life, _ := st.CurrentLife()
		r, _ := life.AllRows()
		return len(r)
	}
	n0 := rows()
	for _, c := range []struct{ plan, err string }{
		{"fly x=1", `no atom or procedure "fly"`},
		{"go_to x=1", "missing z"},
		{"go_to x=900 z=0", "over the cap of 400"},
	} {
		code, _, e := act(c.plan)
		if code != 1 || !strings.Contains(e, "plan refused, nothing done") || !strings.Contains(e, c.err) {
			t.Errorf("%q: exit %d, stderr %s", c.plan, code, e)
		}
	}
	if rows() != n0 {
		t.Errorf("refused plans recorded %d episodes", rows()-n0)
	}
	code, o, e := act("go_to x=5 z=0; mine_ahead")
	if code != 0 || !strings.Contains(o, "[ACTION] mine_ahead() -> ok: broke tree") || !strings.Contains(o, "[END] every milestone reached") {
		t.Errorf("act: %d\n%s\n%s", code, o, e)
	}
	// the session lingers for the notes: mfmd act answers, acting nothing
	code, o, e = act("wait ticks=1")
	if code != 1 || !strings.Contains(e, "the task has ended (done): 1 of 1 goals reached") || !strings.Contains(e, "Write your notes now") {
		t.Errorf("act after the end, while lingering: %d\n%s\n%s", code, o, e)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("play exited %d: %s", code, perr.String())
		}
	case <-time.After(40 * time.Second):
		t.Fatal("play did not end after its --linger")
	}
	if !strings.Contains(pout.String(), "The task has ended (done).") {
		t.Errorf("play did not say it lingers: %s", pout.String())
	}
	if code, _, e := act("wait"); code != 1 || !strings.Contains(e, "no play session is running") {
		t.Errorf("after the end: %d %s", code, e)
	}
}

// TestPlayLive plays the smoke-walk task in the real game: the scripted
// agent acts through mfmd act once per turn; run.json must agree with the
// logged state. Under CI=true a missing game fails the test.
func TestPlayLive(t *testing.T) {
	requireLiveGame(t)
	mfmdOnPath(t)
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := dispatch([]string{"play", "--task", "../../tasks/smoke-walk.json", "--work", dir,
		"--socket", filepath.Join(dir, "play.sock"), "--agent-timeout", "2m",
		"--agent-cmd", "python3 " + scriptedAgent(t) + " --procedure", "--max-turns", "12"}, &out, &errb)
	t.Logf("stdout:\n%s", out.String())
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	tk, _, err := task.Load("../../tasks/smoke-walk.json")
	if err != nil {
		t.Fatal(err)
	}
	run := checkRunAgainstLog(t, filepath.Join(dir, "store"), tk)
	if run.Termination != play.EndDone {
		t.Fatalf("run ended %s after %d turns (want done)", run.Termination, len(run.Turns))
	}
	for _, tr := range run.Turns {
		if tr.Source != "agent-cmd" {
			t.Errorf("turn %s came from %q, want agent-cmd (mfmd act from the agent command)", tr.ID, tr.Source)
		}
		t.Logf("turn %s: %q, %d steps, %d ms", tr.ID, tr.Plan, tr.Steps, tr.Millis)
	}
}

type harnessState = harness.State

// readJSONL calls fn for each line of a steps.jsonl file.
func readJSONL(path string, fn func(step int64, state []byte, events []string)) error {
	_, err := episodes.ScanFile(path, 0, func(l episodes.Line) error {
		var line struct {
			Step   int64           `json:"step"`
			State  json.RawMessage `json:"state"`
			Events []string        `json:"events"`
		}
		if err := json.Unmarshal(l.Data, &line); err != nil {
			return err
		}
		fn(line.Step, line.State, line.Events)
		return nil
	})
	return err
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// TestPlayActionsJSON: an agent command that writes the paper's
// ./actions.json instead of printing; one that gives no plan ends the
// run as agent-idle after three turns.
func TestPlayActionsJSON(t *testing.T) {
	cases := []struct {
		name, cmd, end string
		turns          int
	}{
		{"actions.json", `printf '%s' '{"actions": [{"procedure": "go_to", "args": {"x": 8, "z": 0}}, {"procedure": "go_to", "args": {"x": 0, "z": 0, "within": 0.5}}]}' > actions.json`, play.EndDone, 1},
		{"idle", "cat > /dev/null", "agent-idle", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var out, errb bytes.Buffer
			code := dispatch([]string{"play", "--task", "../../tasks/smoke-walk.json", "--world", "sim", "--work", dir,
				"--socket", filepath.Join(dir, "play.sock"), "--agent-cmd", c.cmd, "--max-turns", "5"}, &out, &errb)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			st, _ := episodes.Open(filepath.Join(dir, "store"))
			run, err := play.ReadRun(st)
			if err != nil {
				t.Fatal(err)
			}
			if run.Termination != c.end || len(run.Turns) != c.turns {
				t.Errorf("ended %s after %d turns, want %s after %d", run.Termination, len(run.Turns), c.end, c.turns)
			}
		})
	}
}

// TestPlayMountSim plays with the store mounted: the scripted player
// reads its start position through the mount, the turn block's frame
// path is under the mount and readable there, and the reads are logged.
func TestPlayMountSim(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	mnt := filepath.Join(dir, "mfm")
	var out, errb bytes.Buffer
	code := dispatch([]string{"play", "--task", "../../tasks/smoke-walk.json", "--world", "sim", "--work", dir, "--mount", mnt,
		"--socket", filepath.Join(dir, "play.sock"), "--max-turns", "6",
		"--agent-cmd", `if [ -n "$MFM_PLAY_ENDED" ]; then cat > ended.txt; echo "- ended $MFM_PLAY_ENDED" > "$MFM_MEMORY/mine/after.md"; exit; fi; ` +
			`tee turn.txt | python3 ` + scriptedAgent(t) + ` --print --notes; f=$(sed -n 's/^\[FRAME\] //p' turn.txt); [ -z "$f" ] || cp "$f" frame.png`}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	st, _ := episodes.Open(filepath.Join(dir, "store"))
	run, err := play.ReadRun(st)
	if err != nil {
		t.Fatal(err)
	}
	if run.Termination != play.EndDone || run.Mount != mnt {
		t.Fatalf("run %s, mount %q: %s", run.Termination, run.Mount, errb.String())
	}
	turn, _ := os.ReadFile(filepath.Join(dir, "turn.txt"))
	if !bytes.Contains(turn, []byte("[FRAME] "+mnt+"/episodes/")) {
		t.Errorf("the frame path is not under the mount:\n%s", turn)
	}
	if fi, err := os.Stat(filepath.Join(dir, "frame.png")); err != nil || fi.Size() == 0 {
		t.Errorf("the frame could not be read through the mount: %v", err)
	}
	notes, err := os.ReadFile(st.Path(episodes.MineDir, "notes.md"))
	if err != nil || !bytes.Contains(notes, []byte("start: x=0.0 z=0.0 (ep_000000)")) {
		t.Errorf("mine/notes.md written through the mount: %q %v", notes, err)
	}
	// after the last goal the command had one notes turn, the mount still there
	if ended, err := os.ReadFile(filepath.Join(dir, "ended.txt")); err != nil || !bytes.Contains(ended, []byte("[END] Write your notes now in "+mnt+"/mine")) {
		t.Errorf("the notes turn's input: %v\n%s", err, ended)
	}
	if after, err := os.ReadFile(st.Path(episodes.MineDir, "after.md")); err != nil || string(after) != "- ended done\n" {
		t.Errorf("the notes written through the mount after the end: %q %v", after, err)
	}
	// the scripted player reads the mount before its plans: run.json says before which
	reads := 0
	for _, tr := range run.Turns {
		for _, r := range tr.ReadsBefore {
			if r.Path == "" || r.Kind == "" {
				t.Errorf("turn %s: read %+v", tr.ID, r)
			}
			// the mount labelled the row with the session's turn
			if got := play.TurnOfRead(run, r.Turn); got != tr.ID {
				t.Errorf("turn %s: read %+v labelled for turn %q", tr.ID, r, got)
			}
			reads++
		}
	}
	if reads == 0 {
		t.Errorf("no turn has reads_before")
	}
	afterEnd := false
	for _, r := range run.ReadsAfter {
		afterEnd = afterEnd || (r.Path == "/mine/after.md" && r.Turn == fmt.Sprintf("after t%04d", len(run.Turns)))
	}
	if !afterEnd {
		t.Errorf("the notes written after the end are not in reads_after labelled after the last turn: %+v", run.ReadsAfter)
	}
	acc, err := os.ReadFile(st.Path(".mfm", "access.jsonl"))
	if err != nil || !bytes.Contains(acc, []byte("ep_000000")) {
		t.Errorf("access log: %v\n%.400s", err, acc)
	}
}

// TestPlayAgentRefused: an agent command whose mfmd act calls are all
// refused ends the run as agent-refused (not idle), nothing recorded.
func TestPlayAgentRefused(t *testing.T) {
	mfmdOnPath(t)
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := dispatch([]string{"play", "--task", "../../tasks/smoke-walk.json", "--world", "sim", "--work", dir,
		"--socket", filepath.Join(dir, "play.sock"), "--agent-cmd", "cat >/dev/null; mfmd act 'fly x=1' || true", "--max-turns", "9"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	st, _ := episodes.Open(filepath.Join(dir, "store"))
	run, err := play.ReadRun(st)
	if err != nil {
		t.Fatal(err)
	}
	if run.Termination != "agent-refused" || len(run.Turns) != 0 || run.StepsUsed != 0 {
		t.Errorf("ended %s after %d turns, %d steps; want agent-refused, none", run.Termination, len(run.Turns), run.StepsUsed)
	}
}

// TestPlayLingerMount: agent-driven play keeps the mount, mine/ writable
// and the socket after the last goal (by default, no --linger), until
// SIGTERM.
func TestPlayLingerMount(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	mnt, sock := filepath.Join(dir, "mfm"), filepath.Join(dir, "play.sock")
	done := make(chan int, 1)
	var pout, perr bytes.Buffer
	go func() {
		done <- dispatch([]string{"play", "--task", "../../tasks/smoke-walk.json", "--world", "sim", "--work", dir, "--mount", mnt, "--socket", sock}, &pout, &perr)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := play.Call(sock, play.Request{Op: "status"}, time.Second); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no session on %s: %s", sock, perr.String())
		}
		select {
		case code := <-done:
			t.Fatalf("play exited %d: %s", code, perr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	act := func(plan string) (int, string, string) {
		var o, e bytes.Buffer
		code := dispatch([]string{"act", "--socket", sock, plan}, &o, &e)
		return code, o.String(), e.String()
	}
	if code, o, e := act("go_to x=8 z=0"); code != 0 {
		t.Fatalf("act: %d %s %s", code, o, e)
	}
	code, o, e := act("go_to x=0 z=0")
	if code != 0 || !strings.Contains(o, "[END] every milestone reached") || !strings.Contains(o, "[END] Write your notes now in "+mnt+"/mine") {
		t.Fatalf("the last goal: %d\n%s\n%s", code, o, e)
	}
	// the task is done: the mount stays, mine/ takes notes, act answers
	if err := os.MkdirAll(filepath.Join(mnt, "mine", "procedures"), 0o755); err != nil {
		t.Fatalf("mkdir in mine/ after the end: %v", err)
	}
	if err := os.WriteFile(filepath.Join(mnt, "mine", "notes.md"), []byte("- came back (ep_000001)\n"), 0o644); err != nil {
		t.Fatalf("notes after the end: %v", err)
	}
	st, _ := episodes.Open(filepath.Join(dir, "store"))
	if b, err := os.ReadFile(st.Path(episodes.MineDir, "notes.md")); err != nil || !bytes.Contains(b, []byte("came back")) {
		t.Errorf("the notes are not in the store: %q %v", b, err)
	}
	if fi, err := os.Stat(st.Path(episodes.MineDir, "procedures")); err != nil || !fi.IsDir() {
		t.Errorf("mine/procedures not made in the store: %v", err)
	}
	if code, _, e := act("go_to x=1 z=0"); code != 1 || !strings.HasPrefix(e, "mfmd act: the task has ended (done)") || !strings.Contains(e, "Ctrl-C") {
		t.Errorf("act while lingering: %d %s", code, e)
	}
	select {
	case code := <-done:
		t.Fatalf("play exited %d before it was stopped: %s", code, pout.String())
	default:
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("play exited %d: %s", code, perr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("play did not stop on SIGTERM while lingering")
	}
	if !strings.Contains(pout.String(), "stays for the agent's notes") || !strings.Contains(pout.String(), "15m0s (--linger)") {
		t.Errorf("stdout: %s", pout.String())
	}
	run, err := play.ReadRun(st)
	if err != nil || run.Termination != play.EndDone {
		t.Fatalf("run.json: %s %v", run.Termination, err)
	}
	// the notes written while lingering are the run's reads after its last turn
	var after []string
	for _, r := range run.ReadsAfter {
		after = append(after, r.Kind+":"+r.Path)
	}
	if !strings.Contains(strings.Join(after, " "), "note-write:/mine/notes.md") {
		t.Errorf("reads_after: %v", after)
	}
}

// requireLiveGame skips a live-game test in -short mode or without the
// game; under CI=true a missing game fails it instead.
func requireLiveGame(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("live game: not in -short")
	}
	if err := luanti.Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI: the live game must run: %v", err)
		}
		t.Skip(err)
	}
}

// requireRoot skips a test that mounts through mfmd play unless it runs
// as root; under CI=true it fails instead.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI: the mount test must run as root")
		}
		t.Skip("mounting needs root here")
	}
}
