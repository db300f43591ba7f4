package play

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/harness"
	"github.com/mfm-project/mfm/task"
)

const logTask = `{"name": "sim-log", "instruction": "get a log and craft planks", "budget": 200, "milestones": [
	{"name": "log", "when": "tree>=1"}, {"name": "planks", "when": "crafted:wood>=4"}, {"name": "sticks", "when": "stick>=4"}]}`

type fixture struct {
	store *episodes.Store
	world *SimWorld
	sess  *Session
	rec   *harness.Recorder
}

func newFixture(t *testing.T, taskJSON string, opt Options) *fixture {
	t.Helper()
	tk, err := task.Parse([]byte(taskJSON))
	if err != nil {
		t.Fatal(err)
	}
	st, err := episodes.Init(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := harness.NewRecorder(st, harness.Options{Frames: true, Task: tk.Instruction})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Close() })
	w, err := NewSimWorld(rec)
	if err != nil {
		t.Fatal(err)
	}
	opt.Task, opt.Store, opt.World = tk, st, w
	s, err := NewSession(opt)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{store: st, world: w, sess: s, rec: rec}
}

func (f *fixture) act(t *testing.T, plan string) string {
	t.Helper()
	block, _, err := f.sess.Act(context.Background(), plan, "test")
	if err != nil {
		t.Fatalf("act %q: %v\n%s", plan, err, block)
	}
	return block
}

func (f *fixture) rows(t *testing.T) []episodes.Row {
	t.Helper()
	life, _ := f.store.CurrentLife()
	rows, err := life.AllRows()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestTurnBlock(t *testing.T) {
	f := newFixture(t, logTask, Options{})
	block := f.act(t, "go_to x=5 z=0; mine_ahead; craft item=wood")
	for _, want := range []string{
		"[TURN] t0001 |",
		"[ACTION] go_to(x=5,z=0) -> ok: arrived",
		"[ACTION] mine_ahead() -> ok: broke tree (5 steps, ep_000002)",
		"[ACTION] craft(item=wood) -> ok: crafted 4 wood from 1 tree (1 run of 1 tree → 4 wood)",
		"[INV] +4 wood",
		"[EVENT] mine_block tree at 5,1,0",
		"[EVENT] craft wood 4",
		"[EVENT] MILESTONE log reached at step",
		"[EVENT] MILESTONE planks reached at step",
		"[GOALS] 2 of 3 reached",
		"[GOAL] sticks: stick>=4",
		"[EPISODES] ep_000001 ep_000002 ep_000003",
		"[FRAME] ",
		"[RECENT]",
		"[MAP] this life:",
	} {
		if !strings.Contains(block, want) {
			t.Errorf("turn block lacks %q:\n%s", want, block)
		}
	}
	used := f.world.State().Step
	if !strings.Contains(block, "| "+itoa(int(used))+" of 200 steps used, "+itoa(200-int(used))+" left") {
		t.Errorf("steps used/left wrong (used %d):\n%s", used, block)
	}
	frame := regexp.MustCompile(`\[FRAME\] (\S+)`).FindStringSubmatch(block)
	if frame == nil {
		t.Fatal("no frame path")
	}
	if _, err := os.Stat(frame[1]); err != nil {
		t.Errorf("frame path: %v", err)
	}
	// run.json: one turn, milestones at the steps the logged state shows
	run, err := ReadRun(f.store)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Turns) != 1 || run.Turns[0].ID != "t0001" || len(run.Turns[0].Entries) != 3 {
		t.Fatalf("turns %+v", run.Turns)
	}
	if run.StepsUsed != int(used) || run.Termination != EndRunning {
		t.Errorf("steps_used %d (want %d), termination %s", run.StepsUsed, used, run.Termination)
	}
	firstTree := firstStepWith(t, f, func(st harness.State) bool { return st.Inventory["tree"] >= 1 })
	firstWood := firstStepWith(t, f, func(st harness.State) bool { return st.Inventory["wood"] >= 4 })
	for _, m := range run.Milestones {
		switch m.Name {
		case "log":
			if !m.Reached || m.Step != firstTree || m.Turn != "t0001" {
				t.Errorf("log: %+v, want step %d", m, firstTree)
			}
		case "planks":
			if !m.Reached || m.Step != firstWood {
				t.Errorf("planks: %+v, want step %d", m, firstWood)
			}
		case "sticks":
			if m.Reached {
				t.Errorf("sticks reached: %+v", m)
			}
		}
	}
}

func itoa(n int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(n)) }

func fmtInt(n int) string {
	if n < 0 {
		return "-" + fmtInt(-n)
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return fmtInt(n/10) + string(rune('0'+n%10))
}

// firstStepWith scans the store's steps.jsonl files for the first step
// whose logged state satisfies ok.
func firstStepWith(t *testing.T, f *fixture, ok func(harness.State) bool) int64 {
	t.Helper()
	life, _ := f.store.CurrentLife()
	for _, r := range f.rows(t) {
		obs, err := readSteps(filepath.Join(life.EpisodeDir(r.ID), "steps.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range obs {
			if ok(o.State) {
				return o.Step
			}
		}
	}
	return -1
}

func TestFailedEntryDropsTheRest(t *testing.T) {
	f := newFixture(t, logTask, Options{})
	n0 := len(f.rows(t))
	block := f.act(t, "mine_ahead; go_to x=1 z=1; wait ticks=3")
	for _, want := range []string{
		"[ACTION] mine_ahead() -> FAILED: nothing in reach to mine",
		"[ACTION] go_to(x=1,z=1) -> DROPPED: an entry failed",
		"[ACTION] wait(ticks=3) -> DROPPED: an entry failed",
	} {
		if !strings.Contains(block, want) {
			t.Errorf("block lacks %q:\n%s", want, block)
		}
	}
	if n := len(f.rows(t)) - n0; n != 1 {
		t.Errorf("%d episodes recorded, want 1 (the dropped entries record nothing)", n)
	}
	run, _ := ReadRun(f.store)
	es := run.Turns[0].Entries
	if len(es) != 3 || es[0].Outcome != "failed" || es[1].Outcome != "dropped" || es[2].Outcome != "dropped" {
		t.Errorf("entries %+v", es)
	}
}

func TestPlanRefusedRecordsNothing(t *testing.T) {
	f := newFixture(t, logTask, Options{})
	f.act(t, "wait ticks=1")
	n0 := len(f.rows(t))
	step0 := f.world.State().Step
	cases := []struct{ plan, err string }{
		{"fly_to x=1", `no atom or procedure "fly_to"`},
		{"go_to x=1", "missing z"},
		{"go_to x=abc z=1", `"abc" is not a number`},
		{"go_to x=1 z=1 speed=3", `no parameter "speed"`},
		{"dig_down n=1.5", "want an integer"},
		{"go_to x=1000 z=0", "over the cap of 400"},
		{"wait ticks=300; wait ticks=200", "up to 500 steps, over the cap of 400 per plan (worst-case estimates: wait ≤300, wait ≤200; see mfmd act --list)"},
		{"look_abs yaw=0; look_abs yaw=90; wait ticks=398", "up to 402 steps, over the cap of 400 per plan (worst-case estimates: look_abs ≤2 ×2, wait ≤398;"},
		{`go_to x=390 z=0; {"forward":1} x20`, `(worst-case estimates: go_to ≤393, {"forward":1} x20 ≤21;`},
		{`{"fly":1} x3`, `unknown key(s) fly`},
		{"go_to x", "want key=value"},
		{"", "empty plan"},
	}
	for _, c := range cases {
		_, _, err := f.sess.Act(context.Background(), c.plan, "test")
		var pe *PlanError
		if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: error %v, want a plan error containing %q", c.plan, err, c.err)
		}
	}
	if n := len(f.rows(t)); n != n0 {
		t.Errorf("%d episodes recorded by refused plans", n-n0)
	}
	if f.world.State().Step != step0 {
		t.Errorf("refused plans spent steps")
	}
	run, _ := ReadRun(f.store)
	if len(run.Turns) != 1 {
		t.Errorf("%d turns in run.json, want 1 (refused plans are no turns)", len(run.Turns))
	}
}

func TestGovernor(t *testing.T) {
	f := newFixture(t, logTask, Options{GovernorRepeats: 2})
	b1 := f.act(t, "mine_ahead")
	if strings.Contains(b1, "governor") {
		t.Errorf("governor after one try:\n%s", b1)
	}
	b2 := f.act(t, "mine_ahead")
	if !strings.Contains(b2, "[NOTE] governor: mine_ahead() finished 2 times in a row here changing nothing") {
		t.Errorf("no governor note after two:\n%s", b2)
	}
	step := f.world.State().Step
	n0 := len(f.rows(t))
	_, _, err := f.sess.Act(context.Background(), "mine_ahead", "test")
	if err == nil || !strings.Contains(err.Error(), "governor") {
		t.Fatalf("third identical proposal: %v", err)
	}
	if f.world.State().Step != step || len(f.rows(t)) != n0 {
		t.Errorf("the refused proposal spent steps or recorded")
	}
	// a refused entry later in a plan is marked and the rest dropped
	block := f.act(t, "look_abs yaw=0; mine_ahead; wait ticks=2")
	if !strings.Contains(block, "[ACTION] look_abs(yaw=0) -> ok") {
		t.Errorf("look_abs:\n%s", block)
	}
	// look_abs to the same yaw changed nothing; mine_ahead now runs again
	// (the streak was broken by another entry)
	if strings.Contains(block, "REFUSED") {
		t.Errorf("mine_ahead refused after a different entry:\n%s", block)
	}
	// something else, then back: moving resets it
	f.act(t, "go_to x=1 z=0")
	f.act(t, "mine_ahead")
	if b := f.act(t, "wait ticks=1"); strings.Contains(b, "REFUSED") {
		t.Errorf("wait refused:\n%s", b)
	}
}

func TestGovernorMidPlan(t *testing.T) {
	f := newFixture(t, logTask, Options{GovernorRepeats: 2})
	block := f.act(t, "look_abs yaw=0; look_abs yaw=0; look_abs yaw=0; wait ticks=1")
	for _, want := range []string{
		"[NOTE] governor: look_abs(yaw=0) finished 2 times",
		"[ACTION] look_abs(yaw=0) -> REFUSED: governor",
		"[ACTION] wait(ticks=1) -> DROPPED: an entry was refused",
	} {
		if !strings.Contains(block, want) {
			t.Errorf("block lacks %q:\n%s", want, block)
		}
	}
}

func TestBudgetAndDone(t *testing.T) {
	f := newFixture(t, `{"instruction": "walk", "budget": 10, "milestones": [{"name": "far", "when": "away>=50"}]}`, Options{})
	block := f.act(t, "go_to x=20 z=0; wait ticks=5")
	if !strings.Contains(block, "[END] the step budget is spent") || !strings.Contains(block, "0 left") {
		t.Errorf("block:\n%s", block)
	}
	select {
	case <-f.sess.Done():
	default:
		t.Fatal("Done not closed after the budget")
	}
	run, _ := ReadRun(f.store)
	if run.Termination != EndBudget || run.StepsUsed < 10 || run.Ended == "" {
		t.Errorf("run %+v", run)
	}
	if !strings.Contains(block, "[END] Write your notes now in "+f.store.Path(episodes.MineDir)) {
		t.Errorf("the block that ends the run does not ask for the notes:\n%s", block)
	}
	step0 := f.world.State().Step
	_, _, err := f.sess.Act(context.Background(), "wait ticks=1", "test")
	var pe *PlanError
	if !errors.Is(err, ErrEnded) || !errors.As(err, &pe) || !strings.Contains(err.Error(), "the task has ended (budget): 0 of 1 goals reached") ||
		!strings.Contains(err.Error(), "Write your notes now") || !strings.Contains(err.Error(), "Ctrl-C") {
		t.Errorf("act after the end: %v", err)
	}
	if f.world.State().Step != step0 {
		t.Errorf("a plan after the end acted")
	}

	g := newFixture(t, logTask, Options{})
	block = g.act(t, "go_to x=5 z=0; mine_ahead; craft item=wood; craft item=stick; wait ticks=20")
	if !strings.Contains(block, "[END] every milestone reached") || !strings.Contains(block, "[ACTION] wait(ticks=20) -> DROPPED: the task is done") {
		t.Errorf("block:\n%s", block)
	}
	if run, _ := ReadRun(g.store); run.Termination != EndDone {
		t.Errorf("termination %s", run.Termination)
	}
	if !strings.Contains(block, "[END] Write your notes now") {
		t.Errorf("the block that reaches the last goal does not ask for the notes:\n%s", block)
	}
	if _, _, err := g.sess.Act(context.Background(), "wait ticks=1", "test"); err == nil || !strings.Contains(err.Error(), "the task has ended (done): 3 of 3 goals reached") {
		t.Errorf("act after the task is done: %v", err)
	}
}

func TestOrderedGoalsAndHazard(t *testing.T) {
	f := newFixture(t, `{"instruction": "out and back", "budget": 300, "ordered": true, "milestones": [
		{"name": "out", "when": "away>=4"}, {"name": "home", "when": "near start r=1 and hurt<=0", "hint": "unhurt"}]}`, Options{})
	b := f.act(t, "wait ticks=1")
	if !strings.Contains(b, "[GOAL] out: away>=4") || !strings.Contains(b, "[GOAL] 1 further goal(s), not yet disclosed") || strings.Contains(b, "home") {
		t.Errorf("disclosure:\n%s", b)
	}
	// walking diagonally to (4,4) crosses the lava at (3,3)
	b = f.act(t, "go_to x=4 z=4")
	if !strings.Contains(b, "FAILED: hurt by lava at 3,3") || !strings.Contains(b, "[EVENT] hurt lava 4") {
		t.Errorf("hazard:\n%s", b)
	}
	if !strings.Contains(b, "MILESTONE out reached") || !strings.Contains(b, "[GOAL] home: near start r=1 and hurt<=0 -- unhurt") {
		t.Errorf("out:\n%s", b)
	}
	b = f.act(t, "go_to x=3 z=0; go_to x=0 z=0 within=0.5")
	if !strings.Contains(b, "MILESTONE home reached") {
		t.Errorf("home:\n%s", b)
	}
}

func TestProcedureWithReflex(t *testing.T) {
	f := newFixture(t, logTask, Options{})
	procs := f.store.Path(episodes.MineDir, "procedures")
	reflexes := f.store.Path(episodes.MineDir, "reflexes")
	for _, d := range []string{procs, reflexes} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(procs, "get_log.py"), `"""get_log: walk to the tree at (x, z) and mine it."""
import json, sys
PARAMS = {"x": "tree x", "z": "tree z"}
args = json.loads(sys.argv[sys.argv.index("--args") + 1])
print(json.dumps({"actions": [{"procedure": "go_to", "args": {"x": args["x"], "z": args["z"]}}, {"procedure": "mine_ahead"}, {"procedure": "craft", "args": {"item": "wood"}}]}))
`)
	list := f.sess.ListAtoms()
	for _, want := range []string{"go_to(x:number, z:number, within:number=1)", "get_log(x, z)", "walk to the tree", "Plan cap: 400 steps"} {
		if !strings.Contains(list, want) {
			t.Errorf("list lacks %q:\n%s", want, list)
		}
	}
	b := f.act(t, "get_log x=5 z=0")
	if !strings.Contains(b, "[ACTION] get_log(x=5,z=0) -> ok: get_log: 3 item(s) ran") || !strings.Contains(b, "MILESTONE planks") {
		t.Errorf("procedure:\n%s", b)
	}
	// a reflex that stops on damage drops the rest of a procedure
	write(filepath.Join(reflexes, "burnt.py"), "# burnt: stop when hurt\n# mfm-when: health < health_prev\nimport json\nprint(json.dumps({\"stop\": True, \"note\": \"hurt: stop\"}))\n")
	write(filepath.Join(procs, "via_lava.py"), `"""via_lava: walk over the lava, then wait."""
import json
print(json.dumps({"actions": [{"procedure": "go_to", "args": {"x": 3, "z": 3, "within": 0.2}}, {"procedure": "wait", "args": {"ticks": 50}}]}))
`)
	f.act(t, "go_to x=0 z=0 within=0.2")
	b = f.act(t, "via_lava")
	if !strings.Contains(b, "[OWN] reflexes: burnt (fired 0)") {
		t.Errorf("no [OWN] line:\n%s", b)
	}
	if !strings.Contains(b, "FAILED: via_lava: item 1 (go_to) failed: hurt by lava") {
		t.Errorf("via_lava:\n%s", b)
	}
	// a reflex that fires after mine_ahead and stops the procedure: the
	// crafts after it are dropped
	write(filepath.Join(reflexes, "got_log.py"), "# got_log: stop after a log\n# mfm-when: entry == \"mine_ahead\"\nimport json\nprint(json.dumps({\"stop\": True, \"note\": \"got one\"}))\n")
	write(filepath.Join(procs, "log_and_craft.py"), `"""log_and_craft: mine the tree at (5, 0) and craft."""
import json
print(json.dumps({"actions": [{"procedure": "go_to", "args": {"x": 5, "z": 0}}, {"procedure": "mine_ahead"}, {"procedure": "craft", "args": {"item": "stick"}}]}))
`)
	wood := f.world.State().Inventory["wood"]
	b = f.act(t, "log_and_craft")
	for _, want := range []string{"[NOTE] [REFLEX got_log] got one", "log_and_craft: a reflex stopped it; 1 item(s) dropped", "got_log (fired 1)"} {
		if !strings.Contains(b, want) {
			t.Errorf("reflex: no %q:\n%s", want, b)
		}
	}
	if got := f.world.State().Inventory; got["wood"] != wood || got["stick"] != 0 {
		t.Errorf("the dropped craft ran: %v", got)
	}
	_ = time.Second
}

func TestReadBefore(t *testing.T) {
	base := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	run := RunRecord{Turns: []TurnRecord{
		{ID: "t0001", Started: base.Add(10 * time.Second).Format(time.RFC3339Nano)},
		{ID: "t0002", Started: base.Add(20 * time.Second).Format(time.RFC3339Nano)},
	}}
	for _, c := range []struct {
		at   time.Duration
		want string
	}{{0, "t0001"}, {10 * time.Second, "t0002"}, {15 * time.Second, "t0002"}, {25 * time.Second, ""}} {
		if got := ReadBefore(run, base.Add(c.at)); got != c.want {
			t.Errorf("read at +%v: %q, want %q", c.at, got, c.want)
		}
	}
}

// TestReadsBefore: run.json attributes the mount's access log rows to the
// turn whose plan they came before; reads of earlier runs are left out,
// reads after the last turn are reads_after.
func TestReadsBefore(t *testing.T) {
	f := newFixture(t, logTask, Options{})
	logPath := f.store.Path(episodes.MetaDir, AccessLogName)
	read := func(path, kind string) {
		t.Helper()
		line := `{"time":"` + time.Now().UTC().Format(time.RFC3339Nano) + `","path":"` + path + `","kind":"` + kind + `","pid":7}` + "\n"
		fh, err := os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		if _, err := fh.WriteString(line); err != nil {
			t.Fatal(err)
		}
	}
	read("/README.md", "readme") // an earlier run's
	tk := f.sess.opt.Task
	sess, err := NewSession(Options{Task: tk, Store: f.store, World: f.world})
	if err != nil {
		t.Fatal(err)
	}
	act := func(plan string) {
		t.Helper()
		if _, _, err := sess.Act(context.Background(), plan, "test"); err != nil {
			t.Fatal(err)
		}
	}
	read("/index.jsonl", "index")
	read("/map/here.txt", "view")
	act("wait ticks=1")
	read("/episodes/ep_000001/frames/000001.png", "frame")
	act("wait ticks=1")
	read("/mine/notes.md", "note-write")
	if err := sess.Flush(); err != nil {
		t.Fatal(err)
	}
	run, err := ReadRun(f.store)
	if err != nil {
		t.Fatal(err)
	}
	paths := func(rs []MemoryRead) string {
		var p []string
		for _, r := range rs {
			p = append(p, r.Kind+":"+r.Path)
		}
		return strings.Join(p, " ")
	}
	if len(run.Turns) != 2 {
		t.Fatalf("%d turns", len(run.Turns))
	}
	for i, want := range []string{"index:/index.jsonl view:/map/here.txt", "frame:/episodes/ep_000001/frames/000001.png"} {
		if got := paths(run.Turns[i].ReadsBefore); got != want {
			t.Errorf("turn %d reads_before %q, want %q", i+1, got, want)
		}
	}
	if got := paths(run.ReadsAfter); got != "note-write:/mine/notes.md" {
		t.Errorf("reads_after %q", got)
	}
}

// TestListAtoms: mfmd act --list shows each atom's worst-case step
// estimate and what the plan cap counts.
func TestListAtoms(t *testing.T) {
	f := newFixture(t, logTask, Options{})
	list := f.sess.ListAtoms()
	for _, want := range []string{
		"go_to(x:number, z:number, within:number=1)  [steps: 1 per block of distance + 3]",
		"look_abs(yaw:number, pitch:number=0)  [steps: ≤2]",
		"wait(ticks:int=10)  [steps: ticks]",
		"for N ticks [steps: N+1]",
		"Plan cap: 400 steps per plan, counting every entry at its worst-case estimate [steps]",
		"Yaw (degrees): 0 faces +z, 90 faces -x, 180 faces -z, 270 faces +x",
		"`near start r=R` / `near X,Z r=R` measure horizontally (2-D",
		"grid.jsonl cells and map/ views use floor(x)",
	} {
		if !strings.Contains(list, want) {
			t.Errorf("--list lacks %q:\n%s", want, list)
		}
	}
}

// TestNightWarning: the turn block flags night and dusk from the state's
// time_of_day, with Luanti's day-night thresholds.
func TestNightWarning(t *testing.T) {
	for _, c := range []struct {
		tod  any
		want string
	}{
		{0.95, "[WARN] night (time_of_day 0.950): frames are dark until time_of_day ≈ 0.22 (full daylight from 0.26)"},
		{0.1, "[WARN] night (time_of_day 0.100)"},
		{0.2, "[WARN] night (time_of_day 0.200)"},
		{0.79, "[WARN] night (time_of_day 0.790)"},
		{0.76, "[WARN] dusk (time_of_day 0.760): the frames go dark at time_of_day ≈ 0.78"},
		{0.23, ""},
		{0.5, ""},
		{nil, ""},
	} {
		f := newFixture(t, logTask, Options{})
		if c.tod != nil {
			f.world.st.Extra = map[string]any{"time_of_day": c.tod}
		}
		block := f.act(t, "wait ticks=1")
		got := ""
		for _, l := range strings.Split(block, "\n") {
			if strings.HasPrefix(l, "[WARN]") {
				got = l
			}
		}
		if (c.want == "") != (got == "") || !strings.HasPrefix(got, c.want) {
			t.Errorf("time_of_day %v: warning %q, want %q", c.tod, got, c.want)
		}
	}
}

// TestEntombedNote: a state that says the head is in a block gets the
// note the brief explains.
func TestEntombedNote(t *testing.T) {
	f := newFixture(t, logTask, Options{})
	f.world.st.Extra = map[string]any{"head_in_block": "dirt"}
	if block := f.act(t, "wait ticks=1"); !strings.Contains(block, "[NOTE] your head is inside a block (dirt): the view is blind; dig out") {
		t.Errorf("no entombed note:\n%s", block)
	}
}

// FuzzReadLog feeds arbitrary access-log bytes to the reader: no panic,
// and every row read is attributed to one turn or to reads_after.
func FuzzReadLog(f *testing.F) {
	f.Add([]byte(`{"time":"2026-12-04T00:48:55.325731835Z","path":"/README.md","kind":"readme","pid":1}` + "\n"))
	f.Add([]byte(`{"time":"2026-12-04T00:50:00Z","path":"/grid.jsonl","kind":"grid"}` + "\n" + `{"time":"bad","path":"/x"}` + "\n{\"path\":"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		l := &readLog{path: filepath.Join(dir, AccessLogName)}
		if err := os.WriteFile(l.path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := l.follow(); err != nil {
			t.Fatal(err)
		}
		run := RunRecord{Turns: []TurnRecord{{ID: "t0001", Started: "2026-12-04T00:49:00Z"}, {ID: "t0002", Started: "2026-12-04T00:51:00Z"}}}
		after := l.attribute(&run)
		n := len(after)
		for _, tr := range run.Turns {
			n += len(tr.ReadsBefore)
		}
		if n != len(l.reads) || len(l.reads) != len(l.times) {
			t.Fatalf("%d reads, %d attributed", len(l.reads), n)
		}
	})
}
