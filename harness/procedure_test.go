package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// procDir writes scripts (name -> content) into a fresh procedures dir.
func procDir(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "procedures")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		mode := os.FileMode(0o644)
		if strings.HasPrefix(body, "#!") {
			mode = 0o755
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// testTimeout bounds every procedure process in these tests except the
// ones that test the timeout itself.
const testTimeout = 20 * time.Second

func needPython(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatalf("python3 is required for the procedure tests (the paper's procedures are Python): %v", err)
	}
}

const pyEquip = `"""equip_hotbar: select a hotbar slot."""
import json, sys
PARAMS = {"slot": "hotbar slot 1-9"}
args = json.loads(sys.argv[sys.argv.index("--args") + 1])
s = json.load(sys.stdin)
if not 1 <= int(args.get("slot", 0)) <= 9:
    raise SystemExit("slot must be 1-9")
print(json.dumps({"actions": [{"action": {"hotbar.%d" % int(args["slot"]): 1}, "repeat": 1}]}))
`

// shell procedure: reads the state with jq-free sh, two raw actions and a
// nested python procedure.
const shDig = `#!/bin/sh
# dig: turn, equip, attack N times (shell)
# mfm-param: n: attack holds
n=$(echo "$2" | sed 's/.*"n": *\([0-9]*\).*/\1/')
cat >/dev/null
echo '{"actions": [{"action": {"camera": [0, 90]}}, {"procedure": "equip_hotbar", "args": {"slot": 2}}, {"action": {"attack": 1}, "repeat": '"$n"'}, {"atom": "collect_drops", "args": {"ticks": 48}}]}'
`

func TestProcedureRun(t *testing.T) {
	needPython(t)
	dir := procDir(t, map[string]string{
		"equip_hotbar.py": pyEquip,
		"dig.sh":          shDig,
		"loop.py":         "import json\nprint(json.dumps({\"actions\": [{\"procedure\": \"loop\"}]}))\n",
		"sleepy.sh":       "#!/bin/sh\n# mfm-timeout: 300ms\n(sleep 30; echo late) &\nsleep 30\n",
		"chatty.py":       "import sys\nsys.stdout.write('x' * 5000000)\n",
		"refuse.py":       "\"\"\"refuse: always refuses.\"\"\"\nimport json, sys\ns = json.load(sys.stdin)\nif s.get('gui_open'):\n    raise SystemExit('a screen is open: close_inventory first')\nprint('{\"actions\": []}')\n",
		"crash.py":        "import json\njson.loads('{')\n",
		"off.py":          "# off: kept but not run\n# mfm-disabled: broke the bridge at ep_000123\nprint('{\"actions\": []}')\n",
		"noisy.py":        "print('debug line')\nprint('{\"actions\": [{\"action\": {\"jump\": 1}, \"repeat\": 3}]}')\n",
		"bad.py":          "print('{\"actions\": [{\"fly\": 1}]}')\n",
		"uses_ghost.py":   "print('{\"actions\": [{\"procedure\": \"ghost\"}]}')\n",
	})
	// testTimeout is generous: CI runs these beside a live game test on two
	// loaded cores, where starting python3 can take seconds. Only sleepy
	// times out, by its own mfm-timeout line.
	r := &Runner{Dir: dir, Timeout: testTimeout, MaxOutput: 64 << 10, MaxDepth: 4}
	state := []byte(`{"gui_open": false, "hotbar": []}`)
	ctx := context.Background()

	t.Run("shell with nested python and atom", func(t *testing.T) {
		res, err := r.Run(ctx, "dig", map[string]any{"n": 3}, state)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(res.Entries())
		want := `[{"action":{"camera":[0,90]},"repeat":1},{"action":{"hotbar.2":1},"repeat":1},{"action":{"attack":1},"repeat":3},{"args":{"ticks":48},"procedure":"collect_drops"}]`
		if string(got) != want {
			t.Fatalf("expansion\n got %s\nwant %s", got, want)
		}
		if from := strings.Join(res.Items[1].From, ">"); from != "dig>equip_hotbar" {
			t.Errorf("item 1 from %q, want dig>equip_hotbar", from)
		}
		if len(res.Invocations) != 2 || res.Invocations[1].Depth != 1 || res.Invocations[1].Name != "equip_hotbar" {
			t.Errorf("invocations %+v", res.Invocations)
		}
	})

	cases := []struct {
		name   string
		args   map[string]any
		state  string
		want   error
		reason string
		msg    string
	}{
		{"loop", nil, "", ErrDepth, ReasonDepth, "over the limit of 4"},
		{"sleepy", nil, "", ErrTimeout, ReasonTimeout, "every process it started were killed"},
		{"chatty", nil, "", ErrOutputLimit, ReasonOutputLimit, "more than 65536 bytes"},
		{"refuse", nil, `{"gui_open": true}`, ErrRefused, ReasonRefused, "a screen is open: close_inventory first"},
		{"equip_hotbar", map[string]any{"slot": 12}, "", ErrRefused, ReasonRefused, "slot must be 1-9"},
		{"crash", nil, "", ErrCrashed, ReasonCrashed, "JSONDecodeError"},
		{"off", nil, "", ErrDisabled, ReasonDisabled, "broke the bridge at ep_000123"},
		{"bad", nil, "", ErrBadOutput, ReasonBadOutput, "actions[0]"},
		{"nosuch", nil, "", ErrNotFound, ReasonNotFound, `no procedure "nosuch"`},
		{"../etc/passwd", nil, "", ErrNotFound, ReasonNotFound, "not a procedure name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := state
			if c.state != "" {
				s = []byte(c.state)
			}
			start := time.Now()
			_, err := r.Run(ctx, c.name, c.args, s)
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			var pe *ProcError
			if !errors.As(err, &pe) || pe.Reason != c.reason {
				t.Fatalf("err %v: want a *ProcError with reason %s", err, c.reason)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q does not say %q", err, c.msg)
			}
			if c.reason == ReasonTimeout {
				// 300 ms declared; the kill must come long before the
				// runner's own timeout or the script's 30 s sleep.
				if !strings.Contains(err.Error(), "after 300ms") {
					t.Errorf("error %q: want the declared 300ms timeout", err)
				}
				if d := time.Since(start); d > testTimeout/2 {
					t.Errorf("timeout took %s", d)
				}
			}
		})
	}

	t.Run("timeout kills the whole group", func(t *testing.T) {
		// bg.sh leaves a background sleep; after the kill no process of its
		// tree may remain. On a loaded machine the shell may not have
		// started the child before a short timeout fires, so the timeout
		// grows until it has (the kill is what is tested, not the timing).
		// The child is found by its command line: inside a PID namespace
		// $! is not the pid the test sees.
		mark := filepath.Join(t.TempDir(), "started")
		tag := strconv.FormatInt(time.Now().UnixNano(), 10)
		d := procDir(t, map[string]string{"bg.sh": "#!/bin/sh\nsleep 60." + tag + " &\necho > " + mark + "\nwait\n"})
		for timeout := 300 * time.Millisecond; ; timeout *= 2 {
			start := time.Now()
			_, err := (&Runner{Dir: d, Timeout: timeout}).Run(ctx, "bg", nil, nil)
			if !errors.Is(err, ErrTimeout) {
				t.Fatalf("err = %v, want a timeout", err)
			}
			if el := time.Since(start); el > timeout+testTimeout/2 {
				t.Errorf("timeout %s returned after %s", timeout, el)
			}
			if _, err := os.Stat(mark); err == nil {
				break
			}
			if timeout > testTimeout {
				t.Fatalf("bg.sh never started its child within %s", timeout)
			}
			t.Logf("timeout %s: the child had not started yet; trying a longer one", timeout)
		}
		waitNoProcs(t, "60."+tag)
	})

	t.Run("debug lines before the JSON are tolerated", func(t *testing.T) {
		res, err := r.Run(ctx, "noisy", nil, state)
		if err != nil || len(res.Items) != 1 || res.Items[0].Repeat != 3 {
			t.Fatalf("res %+v err %v", res, err)
		}
	})

	t.Run("unknown atom with an atom list", func(t *testing.T) {
		rr := *r
		rr.Atoms = map[string]bool{"collect_drops": true}
		if _, err := rr.Run(ctx, "uses_ghost", nil, state); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `"ghost"`) {
			t.Fatalf("err = %v", err)
		}
		if _, err := rr.Run(ctx, "dig", map[string]any{"n": 1}, state); err != nil {
			t.Fatalf("dig with atom list: %v", err)
		}
	})
}

func TestProcedureHeader(t *testing.T) {
	dir := procDir(t, map[string]string{
		"equip_hotbar.py": pyEquip,
		"dig.sh":          shDig,
		"notes.md":        "not a script",
		".hidden.py":      "x",
		"odd.xyz":         "no way to run",
	})
	procs, bad, err := ListProcedures(dir, KindProcedure)
	if err != nil {
		t.Fatal(err)
	}
	if len(procs) != 2 || len(bad) != 1 || !strings.Contains(bad[0].Error(), "cannot tell how to run odd.xyz") {
		t.Fatalf("procs %d bad %v", len(procs), bad)
	}
	dig, eq := procs[0], procs[1]
	if dig.Description != "turn, equip, attack N times (shell)" || len(dig.Params) != 1 || dig.Params[0].Name != "n" {
		t.Errorf("dig header: %+v", dig)
	}
	if eq.Description != "select a hotbar slot." || len(eq.Params) != 1 || eq.Params[0].Description != "hotbar slot 1-9" || eq.Command[0] != "python3" {
		t.Errorf("equip_hotbar header: %+v", eq)
	}
	// The paper's own procedure.
	p, err := LoadProcedure("../testdata/paper-run-diamond/store/mine/procedures/aim_speckles.py", KindProcedure)
	if err != nil {
		t.Fatal(err)
	}
	if p.Description != "immediately aim at a watcher pixel, mine twice, and collect the ore drop." {
		t.Errorf("aim_speckles description %q", p.Description)
	}
	var names []string
	for _, pm := range p.Params {
		names = append(names, pm.Name)
	}
	if strings.Join(names, ",") != "x,y,pick" {
		t.Errorf("aim_speckles params %v", names)
	}
}

// TestPaperProcedure runs the paper's aim_speckles.py on a state like the
// run's: it refuses without a pickaxe and expands otherwise.
func TestPaperProcedure(t *testing.T) {
	needPython(t)
	r := &Runner{Dir: "../testdata/paper-run-diamond/store/mine/procedures", Timeout: testTimeout}
	ctx := context.Background()
	_, err := r.Run(ctx, "aim_speckles", map[string]any{"x": 320, "y": 180}, []byte(`{"gui_open": false, "hotbar": [{"item": "dirt", "slot": 0, "n": 3}]}`))
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "no pickaxe in hotbar") {
		t.Fatalf("err = %v, want the no-pickaxe refusal", err)
	}
	res, err := r.Run(ctx, "aim_speckles", map[string]any{"x": 320, "y": 180, "pick": 7}, []byte(`{"gui_open": false, "hotbar": [{"item": "stone_pickaxe", "slot": 6, "n": 1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != 5 || res.Items[0].Name != "equip_hotbar" || res.Items[0].Args["slot"] != json.Number("7") || res.Items[2].Repeat != 30 {
		t.Fatalf("expansion %+v", res.Entries())
	}
}

// TestReflexes runs the paper's reflexes on samples and a declared
// condition.
func TestReflexes(t *testing.T) {
	needPython(t)
	dir := procDir(t, map[string]string{
		"fell.py":    mustRead(t, "../testdata/paper-run/store/mine/reflexes/fell.py"),
		"lava.py":    mustRead(t, "../testdata/paper-run/store/mine/reflexes/lava_ahead.py"),
		"low.sh":     "#!/bin/sh\n# low: health under 6\n# mfm-when: health < 6 && entry != \"eat\"\necho '{\"note\": \"health low\"}'\n",
		"retired.sh": "#!/bin/sh\n# mfm-disabled: too noisy\necho '{\"stop\": true, \"note\": \"never\"}'\n",
	})
	set, err := LoadReflexes(dir, &Runner{Dir: t.TempDir(), Timeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	cur := State{Step: 100, X: 3165, Y: 66, Z: 1416, Health: 5, Extra: map[string]any{"lava_frac": 0.05}}
	prev := State{Step: 96, X: 3165, Y: 68.5, Z: 1414, Health: 5, Extra: map[string]any{"lava_frac": 0.0}}
	fired := set.Check(context.Background(), Sample(cur, &prev, "go_to"))
	got := map[string]Firing{}
	for _, f := range fired {
		got[f.Reflex] = f
	}
	if f := got["fell"]; !f.Stop || !strings.Contains(f.Note, "dropping 2.5 blocks") || f.Step != 100 {
		t.Errorf("fell: %+v", f)
	}
	if f := got["lava"]; !f.Stop || len(f.Items) != 1 || f.Items[0].Repeat != 6 || f.Items[0].Action["back"] != json.Number("1") {
		t.Errorf("lava: %+v", f)
	}
	if f, ok := got["low"]; !ok || f.Note != "health low" || f.Stop {
		t.Errorf("low: %+v (fired %v)", f, ok)
	}
	if _, ok := got["retired"]; ok {
		t.Error("a disabled reflex fired")
	}
	// Condition false: the declared reflex is not even started; the paper's
	// reflexes print nothing on a calm sample.
	calm := State{Step: 200, X: 1, Y: 70, Z: 1, Health: 20, Extra: map[string]any{"lava_frac": 0.0}}
	if fired := set.Check(context.Background(), Sample(calm, &calm, "eat")); len(fired) != 0 {
		t.Errorf("calm sample fired %+v", fired)
	}
	// A bad declaration is reported, the rest load.
	bad := procDir(t, map[string]string{"x.sh": "#!/bin/sh\n# mfm-when: health <<< 3\n", "y.sh": "#!/bin/sh\n"})
	set2, err := LoadReflexes(bad, &Runner{})
	if err == nil || !strings.Contains(err.Error(), "reflex x: mfm-when") || len(set2.Reflexes) != 1 {
		t.Errorf("bad declaration: err %v, loaded %d", err, len(set2.Reflexes))
	}
}

func mustRead(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCallRecorded records procedure calls through the Recorder: the
// expansion, outcome and a reflex stop land in the episode, and the
// refusal is an episode too.
func TestCallRecorded(t *testing.T) {
	needPython(t)
	s := newStore(t)
	rec, err := NewRecorder(s, Options{Clock: func() time.Time { return time.Unix(0, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if _, err := rec.Initial(st(0, 0, 70, 0), nil); err != nil {
		t.Fatal(err)
	}
	r := &Runner{Dir: procDir(t, map[string]string{"equip_hotbar.py": pyEquip, "dig.sh": shDig}), Timeout: testTimeout}
	refl := procDir(t, map[string]string{"deep.sh": "#!/bin/sh\n# mfm-when: pos.y < pos_prev.y - 2\necho '{\"stop\": true, \"note\": \"fell\", \"actions\": [{\"action\": {\"back\": 1}, \"repeat\": 2}]}'\n"})
	set, err := LoadReflexes(refl, r)
	if err != nil {
		t.Fatal(err)
	}
	var y float64 = 70
	step := int64(0)
	var ran []string
	exec := func(ctx context.Context, it Item, emit func(Step) error) error {
		ran = append(ran, it.EntryName())
		n := it.Repeat
		if n == 0 {
			n = 1
		}
		for i := 0; i < n; i++ {
			step++
			if it.EntryName() == "raw" && it.Action["attack"] != nil {
				y -= 1 // digging down: falls
			}
			if err := emit(Step{Action: it.Action, State: st(step, 0, y, 0)}); err != nil {
				return err
			}
		}
		return nil
	}
	cr, row, err := r.Call(context.Background(), rec, "dig", []Arg{{"n", 8}}, exec, CallOptions{State: []byte(`{}`), Reflexes: set})
	if err != nil {
		t.Fatal(err)
	}
	if row.Action() != "dig" || cr.Outcome != OutcomeStopped || len(cr.Reflexes) != 1 {
		t.Fatalf("row %s outcome %s reflexes %+v", row.Action(), cr.Outcome, cr.Reflexes)
	}
	// camera, equip (raw hotbar), attack x8 stopped after 4 steps (3 blocks
	// down), then the reflex's back x2; collect_drops dropped.
	if strings.Join(ran, ",") != "raw,raw,raw,raw" || step != 1+1+4+2 {
		t.Errorf("ran %v, %d steps", ran, step)
	}
	act := readJSON(t, filepath.Join(s.Root, row.Path, "action.json"))
	proc := act["procedure"].(map[string]any)
	if proc["outcome"] != "stopped" || len(proc["expansion"].([]any)) != 4 || proc["name"] != "dig" {
		t.Errorf("action.json procedure: %v", proc)
	}
	out := readJSON(t, filepath.Join(s.Root, row.Path, "outcome.json"))
	if notes, _ := json.Marshal(out["notes"]); !strings.Contains(string(notes), "[REFLEX deep] fell -- the runner dropped the rest of your plan (1 action(s)).") {
		t.Errorf("notes %s", notes)
	}

	// A refusal is recorded as an episode without steps.
	before := step
	cr, row, err = r.Call(context.Background(), rec, "equip_hotbar", []Arg{{"slot", 0}}, exec, CallOptions{State: []byte(`{}`)})
	if !errors.Is(err, ErrRefused) || cr.Outcome != ReasonRefused || step != before {
		t.Fatalf("refusal: err %v outcome %s", err, cr.Outcome)
	}
	if row.Action() != "equip_hotbar" || row.Note != "equip_hotbar: refused: slot must be 1-9" {
		t.Errorf("refusal row %s note %q", row.Action(), row.Note)
	}
	// the refusing process is one of the invocations, with its exit status
	act = readJSON(t, filepath.Join(s.Root, row.Path, "action.json"))
	invs, _ := json.Marshal(act["procedure"].(map[string]any)["invocations"])
	if !strings.Contains(string(invs), `"exit":1`) || !strings.Contains(string(invs), `"name":"equip_hotbar"`) {
		t.Errorf("refusal invocations %s", invs)
	}
	// a disabled procedure is never started: no invocation
	r.Dir = procDir(t, map[string]string{"off.sh": "#!/bin/sh\n# mfm-disabled: broke things\necho '{\"actions\": []}'\n"})
	cr, _, err = r.Call(context.Background(), rec, "off", nil, exec, CallOptions{})
	if !errors.Is(err, ErrDisabled) || len(cr.Invocations) != 0 {
		t.Errorf("disabled: %v, invocations %+v", err, cr.Invocations)
	}
}

func readJSON(t testing.TB, p string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// FuzzProcedureHeader: any file content parses without panic, and the
// description is one line.
func FuzzProcedureHeader(f *testing.F) {
	f.Add([]byte(pyEquip))
	f.Add([]byte(shDig))
	f.Add([]byte("#!/usr/bin/env python3\n\"\"\"x: y\n# mfm-when: a > 1\nPARAMS = {'a': 'b'}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := &Procedure{Name: "x", Params: []Param{}}
		parseHeader(p, data)
		if strings.ContainsAny(p.Description, "\n") {
			t.Fatalf("description has a newline: %q", p.Description)
		}
		for _, prm := range p.Params {
			if prm.Name == "" || strings.ContainsAny(prm.Description+prm.Default, "\n") {
				t.Fatalf("param %+v: no name, or a newline in its description or default", prm)
			}
		}
	})
}

// FuzzExpandItems: any procedure output either expands or fails with a
// *ProcError; it never panics.
func FuzzExpandItems(f *testing.F) {
	f.Add([]byte(`{"actions": [{"action": {"attack": 1}, "repeat": 30}, {"procedure": "collect_drops", "args": {"ticks": 48}}]}`))
	f.Add([]byte(`{"actions": [{"atom": "x"}, {"action": {}, "repeat": -1}]}`))
	f.Add([]byte(`debug\n{"actions": []}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		var o output
		if err := decodeOutput(data, &o); err != nil {
			return
		}
		r := &Runner{Dir: dir}
		res := &Result{}
		err := r.expandItems(context.Background(), res, o.Actions, nil, []string{"p"})
		var pe *ProcError
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("error %v is not a *ProcError", err)
		}
		for _, it := range res.Items {
			if it.Kind == ItemRaw && (it.Repeat < 1 || it.Action == nil) {
				t.Fatalf("bad raw item %+v", it)
			}
		}
	})
}

// TestCatalogRecordedCalls records calls of the store's own procedures and
// reads them back through the .catalog renderer: calls, last outcome
// (explicit in action.json, not through a shared Meta map), episodes used.
func TestCatalogRecordedCalls(t *testing.T) {
	needPython(t)
	s := newStore(t)
	pdir := s.Path("mine", "procedures")
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"equip_hotbar.py": pyEquip, "dig.sh": shDig} {
		mode := os.FileMode(0o644)
		if strings.HasPrefix(body, "#!") {
			mode = 0o755
		}
		if err := os.WriteFile(filepath.Join(pdir, name), []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := NewRecorder(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if _, err := rec.Initial(st(0, 0, 70, 0), nil); err != nil {
		t.Fatal(err)
	}
	r := &Runner{Dir: pdir, Timeout: testTimeout}
	step := int64(0)
	exec := func(ctx context.Context, it Item, emit func(Step) error) error {
		step++
		return emit(Step{Action: it.Action, State: st(step, 0, 70, 0)})
	}
	meta := map[string]any{"turn": 1}
	if _, _, err := r.Call(context.Background(), rec, "dig", []Arg{{"n", 2}}, exec, CallOptions{State: []byte(`{}`), Meta: meta}); err != nil {
		t.Fatal(err)
	}
	if _, ok := meta["procedure"]; ok {
		t.Error("Call wrote into the caller's Meta map")
	}
	_, row, err := r.Call(context.Background(), rec, "equip_hotbar", []Arg{{"slot", 0}}, exec, CallOptions{State: []byte(`{}`)})
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("refusal: %v", err)
	}
	if _, _, err := r.Call(context.Background(), rec, "equip_hotbar", []Arg{{"slot", 3}}, exec, CallOptions{State: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	act := readJSON(t, filepath.Join(s.Root, row.Path, "action.json"))
	if p := act["procedure"].(map[string]any); p["outcome"] != "refused" || act["entry"].(map[string]any)["procedure"] != "equip_hotbar" {
		t.Errorf("refusal action.json %v", act)
	}
	b, err := CatalogFunc(s)(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Procedures []CatalogEntry `json:"procedures"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]CatalogEntry{}
	for _, e := range doc.Procedures {
		got[e.Name] = e
	}
	if e := got["dig"]; e.Calls != 1 || e.LastOutcome != "ok" || len(e.Used) != 1 || e.Used[0].ID != "ep_000001" || e.Description != "turn, equip, attack N times (shell)" || len(e.Params) != 1 {
		t.Errorf("dig: %+v", e)
	}
	// the outer call only: dig's nested equip_hotbar is part of dig's episode
	if e := got["equip_hotbar"]; e.Calls != 2 || e.LastOutcome != "ok" || len(e.Used) != 2 || e.Used[0].ID != "ep_000002" {
		t.Errorf("equip_hotbar: %+v", e)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := CatalogFunc(s)(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ctx: %v", err)
	}
}

// TestProtocolCall runs procedures by name through the record protocol's
// call op: the reply carries the expansion, the episode records call,
// arguments, expansion and the outcome given at end; a refusal is an
// episode at once; the catalog counts both.
func TestProtocolCall(t *testing.T) {
	needPython(t)
	s := newStore(t)
	pdir := s.Path("mine", "procedures")
	os.MkdirAll(pdir, 0o755)
	os.WriteFile(filepath.Join(pdir, "equip_hotbar.py"), []byte(pyEquip), 0o644)
	os.WriteFile(filepath.Join(pdir, "dig.sh"), []byte(shDig), 0o755)
	rec, err := NewRecorder(s, Options{Procedures: &Runner{Dir: pdir, Timeout: testTimeout}})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	in := `{"op": "initial", "state": {"step": 0, "y": 70}}
{"op": "call", "call": {"kind": "dig", "args": {"n": 2}}, "id": 1}
{"op": "step", "action": {"camera": [0, 90]}, "state": {"step": 1, "y": 70}}
{"op": "step", "action": {"attack": 1}, "state": {"step": 2, "y": 70}}
{"op": "end", "outcome": "stopped", "done": 2}
{"op": "call", "call": {"kind": "equip_hotbar", "args": {"slot": 0}}}
{"op": "call", "call": {"kind": "ghost"}}
{"op": "end", "outcome": "ok"}
{"op": "call", "call": {"kind": "dig", "raw": {"attack": 1}}}
`
	var out strings.Builder
	bad, err := serveLines(rec, strings.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	reps := strings.Split(strings.TrimSpace(out.String()), "\n")
	if bad != 2 || len(reps) != 9 {
		t.Fatalf("%d bad, replies:\n%s", bad, out.String())
	}
	want := []string{
		1: `"actions":[{"action":{"camera":[0,90]},"repeat":1},{"action":{"hotbar.2":1},"repeat":1},{"action":{"attack":1},"repeat":2},{"args":{"ticks":48},"procedure":"collect_drops"}]`,
		4: `"episode":"ep_000001"`,
		5: `"outcome":"refused"`,
		6: `"outcome":"not-found"`,
		7: `"ok":false`,
		8: `"ok":false`,
	}
	for i, w := range want {
		if w != "" && !strings.Contains(reps[i], w) {
			t.Errorf("reply %d %s lacks %s", i+1, reps[i], w)
		}
	}
	act := readJSON(t, filepath.Join(s.Root, "episodes", "ep_000001", "action.json"))
	p := act["procedure"].(map[string]any)
	if p["outcome"] != "stopped" || p["done"] != 2.0 || len(p["expansion"].([]any)) != 4 || p["args"].(map[string]any)["n"] != 2.0 || act["entry"].(map[string]any)["procedure"] != "dig" {
		t.Errorf("dig action.json %v", act)
	}
	act = readJSON(t, filepath.Join(s.Root, "episodes", "ep_000002", "action.json"))
	if p := act["procedure"].(map[string]any); p["outcome"] != "refused" || !strings.Contains(p["error"].(string), "slot must be 1-9") {
		t.Errorf("refusal action.json %v", act)
	}
	entries, err := Catalog(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch e.Name {
		case "dig":
			if e.Calls != 1 || e.LastOutcome != "stopped" {
				t.Errorf("catalog dig %+v", e)
			}
		case "equip_hotbar":
			if e.Calls != 1 || !strings.HasPrefix(e.LastOutcome, "refused: ") {
				t.Errorf("catalog equip_hotbar %+v", e)
			}
		}
	}
}

// TestInvocationMillis: every process's wall time is recorded, in the
// Result and in the episode's action.json ("ms").
func TestInvocationMillis(t *testing.T) {
	s := newStore(t)
	pdir := s.Path("mine", "procedures")
	os.MkdirAll(pdir, 0o755)
	os.WriteFile(filepath.Join(pdir, "slow.sh"), []byte("#!/bin/sh\ncat >/dev/null\nsleep 0.3\necho '{\"actions\": [{\"procedure\": \"slower\"}, {\"atom\": \"look\"}]}'\n"), 0o755)
	os.WriteFile(filepath.Join(pdir, "slower.sh"), []byte("#!/bin/sh\ncat >/dev/null\nsleep 0.6\necho '{\"actions\": [{\"action\": {\"jump\": 1}}]}'\n"), 0o755)
	r := &Runner{Dir: pdir, Timeout: testTimeout}
	res, err := r.Run(context.Background(), "slow", nil, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Invocations) != 2 {
		t.Fatalf("invocations %+v", res.Invocations)
	}
	// slow's own time includes nothing of slower's: they run one after
	// the other.
	for i, min := range []int64{300, 600} {
		if ms := res.Invocations[i].Millis; ms < min || ms > testTimeout.Milliseconds() {
			t.Errorf("invocation %s: %d ms, want at least %d", res.Invocations[i].Name, ms, min)
		}
	}
	rec, err := NewRecorder(s, Options{Procedures: r})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	var out strings.Builder
	in := "{\"op\": \"initial\", \"state\": {\"step\": 0}}\n{\"op\": \"call\", \"call\": {\"kind\": \"slow\"}}\n{\"op\": \"end\"}\n"
	if bad, err := serveLines(rec, strings.NewReader(in), &out); err != nil || bad != 0 {
		t.Fatalf("%d bad, %v:\n%s", bad, err, out.String())
	}
	act := readJSON(t, filepath.Join(s.Root, "episodes", "ep_000001", "action.json"))
	invs := act["procedure"].(map[string]any)["invocations"].([]any)
	for i, min := range []float64{300, 600} {
		if ms := invs[i].(map[string]any)["ms"].(float64); ms < min {
			t.Errorf("action.json invocation %d: ms %v, want at least %v", i, ms, min)
		}
	}
}

// TestReflexesSameSample: three reflexes fire on the same sample, two of
// them stopping. All their actions run, in name order, and each stopping
// note counts the plan's dropped actions only (not another reflex's).
func TestReflexesSameSample(t *testing.T) {
	s := newStore(t)
	rec, err := NewRecorder(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if _, err := rec.Initial(st(0, 0, 70, 0), nil); err != nil {
		t.Fatal(err)
	}
	r := &Runner{Dir: procDir(t, map[string]string{
		"plan.sh": "#!/bin/sh\ncat >/dev/null\necho '{\"actions\": [{\"action\": {\"attack\": 1}, \"repeat\": 8}, {\"atom\": \"collect_drops\"}, {\"atom\": \"look\"}]}'\n",
	}), Timeout: testTimeout}
	refl := procDir(t, map[string]string{
		"a_wave.sh": "#!/bin/sh\n# mfm-when: entry == \"raw\"\ncat >/dev/null\necho '{\"note\": \"waving\", \"actions\": [{\"action\": {\"wave\": 1}}]}'\n",
		"b_back.sh": "#!/bin/sh\n# mfm-when: entry == \"raw\"\ncat >/dev/null\necho '{\"stop\": true, \"note\": \"backing\", \"actions\": [{\"action\": {\"back\": 1}, \"repeat\": 2}]}'\n",
		"c_duck.sh": "#!/bin/sh\n# mfm-when: entry == \"raw\"\ncat >/dev/null\necho '{\"stop\": true, \"note\": \"ducking\", \"actions\": [{\"action\": {\"sneak\": 1}}]}'\n",
	})
	set, err := LoadReflexes(refl, r)
	if err != nil {
		t.Fatal(err)
	}
	step := int64(0)
	var ran []string
	exec := func(ctx context.Context, it Item, emit func(Step) error) error {
		n := max(it.Repeat, 1)
		for i := 0; i < n; i++ {
			step++
			if err := emit(Step{Action: it.Action, State: st(step, 0, 70, 0)}); err != nil {
				return err
			}
		}
		if it.Kind == ItemRaw {
			for k := range it.Action {
				ran = append(ran, fmt.Sprintf("%s*%d", k, n))
			}
		} else {
			ran = append(ran, it.Name)
		}
		return nil
	}
	// ran lists the items that ran to their end: not the attack stopped
	// at its 4th step.
	cr, row, err := r.Call(context.Background(), rec, "plan", nil, exec, CallOptions{State: []byte(`{}`), Reflexes: set})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ran, ","); got != "wave*1,back*2,sneak*1" || step != 4+1+2+1 {
		t.Errorf("ran %s in %d steps, want wave*1,back*2,sneak*1 in 8", got, step)
	}
	if cr.Outcome != OutcomeStopped || cr.Done != 4 || len(cr.Reflexes) != 3 {
		t.Errorf("outcome %s done %d firings %+v", cr.Outcome, cr.Done, cr.Reflexes)
	}
	out := readJSON(t, filepath.Join(s.Root, row.Path, "outcome.json"))
	notes, _ := json.Marshal(out["notes"])
	want := `["[REFLEX a_wave] waving","[REFLEX b_back] backing -- the runner dropped the rest of your plan (2 action(s)).","[REFLEX c_duck] ducking -- the runner dropped the rest of your plan (2 action(s))."]`
	if string(notes) != want {
		t.Errorf("notes\n got %s\nwant %s", notes, want)
	}

	// Without a stop the reflex's actions run after the current item,
	// then the rest of the plan: a_wave fires on the attack's 4th and 8th
	// steps.
	set.Reflexes = set.Reflexes[:1]
	ran = nil
	if _, _, err := r.Call(context.Background(), rec, "plan", nil, exec, CallOptions{State: []byte(`{}`), Reflexes: set}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ran, ","); got != "attack*8,wave*1,wave*1,collect_drops,look" {
		t.Errorf("without a stop ran %s", got)
	}
}

// TestProtocolUnusable: a call of a script that cannot be used (two files
// with its name, no way to run it, directly or nested) is the agent's
// failed call: recorded as an episode with outcome unusable and replied
// ok:true. A call that fails for another reason (mine/procedures cannot
// be read) is rejected, ok:false, and records nothing.
func TestProtocolUnusable(t *testing.T) {
	s := newStore(t)
	pdir := s.Path("mine", "procedures")
	os.MkdirAll(pdir, 0o755)
	for name, body := range map[string]string{
		"dig.py":   "print('{\"actions\": []}')\n",
		"dig.sh":   "echo '{\"actions\": []}'\n",
		"odd.xyz":  "no way to run this\n",
		"outer.sh": "cat >/dev/null\necho '{\"actions\": [{\"procedure\": \"dig\"}]}'\n",
	} {
		os.WriteFile(filepath.Join(pdir, name), []byte(body), 0o644)
	}
	rec, err := NewRecorder(s, Options{Procedures: &Runner{Dir: pdir, Timeout: testTimeout}})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	in := `{"op": "initial", "state": {"step": 0}}
{"op": "call", "call": {"kind": "dig"}}
{"op": "call", "call": {"kind": "odd"}}
{"op": "call", "call": {"kind": "outer"}}
`
	var out strings.Builder
	if bad, err := serveLines(rec, strings.NewReader(in), &out); err != nil || bad != 0 {
		t.Fatalf("%d bad, %v:\n%s", bad, err, out.String())
	}
	reps := strings.Split(strings.TrimSpace(out.String()), "\n")
	for i, w := range []string{
		`"error":"procedure dig: unusable: ambiguous, several files: dig.py, dig.sh: rename one"`,
		`"error":"procedure odd: unusable: cannot tell how to run odd.xyz: make it executable`,
		`"error":"procedure outer > dig: unusable: ambiguous, several files`,
	} {
		if r := reps[i+1]; !strings.Contains(r, `"ok":true`) || !strings.Contains(r, `"outcome":"unusable"`) || !strings.Contains(r, w) {
			t.Errorf("reply %d: %s\nwant ok, outcome unusable, %s", i+2, r, w)
		}
		act := readJSON(t, filepath.Join(s.Root, "episodes", fmt.Sprintf("ep_%06d", i+1), "action.json"))
		if p := act["procedure"].(map[string]any); p["outcome"] != "unusable" {
			t.Errorf("ep_%06d: outcome %v", i+1, p["outcome"])
		}
	}

	// mine/procedures is a file: nothing the procedure did; nothing recorded
	os.RemoveAll(pdir)
	os.WriteFile(pdir, []byte("not a directory"), 0o644)
	out.Reset()
	bad, err := serveLines(rec, strings.NewReader(`{"op": "call", "call": {"kind": "dig"}}`+"\n"), &out)
	if err != nil || bad != 1 || !strings.Contains(out.String(), `"ok":false`) || !strings.Contains(out.String(), "not a directory") {
		t.Fatalf("unreadable dir: %d bad, %v: %s", bad, err, out.String())
	}
	if id := rec.NextID(); id != "ep_000004" {
		t.Errorf("a rejected call recorded an episode: next id %s", id)
	}
	if _, err := os.Stat(filepath.Join(s.Root, "episodes", "ep_000004")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ep_000004: %v", err)
	}
}

// TestCatalogErrors: scripts that cannot be used are listed by name and
// file with their error; a reflex whose mfm-when does not compile (which
// LoadReflexes leaves out) is listed with its declarations and the error.
func TestCatalogErrors(t *testing.T) {
	s := newStore(t)
	files := map[string]string{
		"procedures/dig.py":       "# dig: python\nprint('{\"actions\": []}')\n",
		"procedures/dig.sh":       "# dig: shell\necho '{\"actions\": []}'\n",
		"procedures/odd.xyz":      "no way to run this\n",
		"reflexes/bad_when.sh":    "#!/bin/sh\n# bad_when: a typo in the condition\n# mfm-when: health <<< 3\necho '{}'\n",
		"reflexes/good.sh":        "#!/bin/sh\n# good: fine\n# mfm-when: health < 3\necho '{}'\n",
		"reflexes/unknown_var.sh": "#!/bin/sh\n# unknown_var: undefined names are nil, not errors\n# mfm-when: lava_frac > 0.1\necho '{}'\n",
	}
	for name, body := range files {
		p := s.Path("mine", name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		mode := os.FileMode(0o644)
		if strings.HasPrefix(body, "#!") {
			mode = 0o755
		}
		os.WriteFile(p, []byte(body), mode)
	}
	entries, err := Catalog(s)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, fmt.Sprintf("%s %s %s error=%q", e.Kind, e.Name, e.File, e.Error))
	}
	want := []string{
		`procedure dig procedures/dig.py error=""`,
		`procedure dig procedures/dig.sh error="procedure dig: two files, dig.py and dig.sh: rename one"`,
		`procedure odd procedures/odd.xyz error="load procedure odd: cannot tell how to run odd.xyz: make it executable (chmod +x) with a #! line, or use one of the extensions .py .sh .bash .js .rb .pl .lua"`,
		`reflex bad_when reflexes/bad_when.sh error="reflex bad_when: mfm-when: condition \"health <<< 3\": `,
		`reflex good reflexes/good.sh error=""`,
		`reflex unknown_var reflexes/unknown_var.sh error=""`,
	}
	if len(got) != len(want) {
		t.Fatalf("catalog:\n%s", strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("entry %d\n got %s\nwant %s…", i, got[i], want[i])
		}
	}
	for _, e := range entries {
		if e.Name == "bad_when" && (e.When != "health <<< 3" || e.Description != "a typo in the condition" || e.SHA256 == "") {
			t.Errorf("bad_when lost its declarations: %+v", e)
		}
	}
	// the runner leaves exactly that reflex out
	set, err := LoadReflexes(s.Path("mine", "reflexes"), &Runner{})
	var le *LoadError
	if !errors.As(err, &le) || le.Name != "bad_when" || len(set.Reflexes) != 2 {
		t.Errorf("LoadReflexes: %v, %d loaded", err, len(set.Reflexes))
	}
}

// TestProtocolReflexes: the call op's episodes are watched by the store's
// reflexes as Runner.Call's are. A stop comes back in the step's reply
// with the new plan; the firing, its note and the outcome are recorded the
// same way; a reflex without stop inserts its actions after the item.
func TestProtocolReflexes(t *testing.T) {
	s := newStore(t)
	for name, body := range map[string]string{
		"procedures/dig.sh":   "#!/bin/sh\ncat >/dev/null\necho '{\"actions\": [{\"action\": {\"attack\": 1}, \"repeat\": 8}, {\"atom\": \"collect_drops\"}, {\"atom\": \"look\"}]}'\n",
		"procedures/tidy.sh":  "#!/bin/sh\ncat >/dev/null\necho '{\"actions\": [{\"atom\": \"collect_drops\"}, {\"atom\": \"look\"}]}'\n",
		"reflexes/deep.sh":    "#!/bin/sh\n# mfm-when: entry == \"raw\" && pos.y < pos_prev.y - 2\ncat >/dev/null\necho '{\"stop\": true, \"note\": \"fell\", \"actions\": [{\"action\": {\"back\": 1}, \"repeat\": 2}]}'\n",
		"reflexes/wave.sh":    "#!/bin/sh\n# mfm-when: entry == \"collect_drops\"\ncat >/dev/null\necho '{\"note\": \"waving\", \"actions\": [{\"action\": {\"wave\": 1}}]}'\n",
		"reflexes/retired.sh": "#!/bin/sh\n# mfm-disabled: never\necho '{\"stop\": true}'\n",
	} {
		p := s.Path("mine", name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o755)
	}
	rec, err := NewRecorder(s, Options{Procedures: &Runner{Dir: s.Path("mine", "procedures"), Timeout: testTimeout}})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	var in strings.Builder
	in.WriteString(`{"op": "initial", "state": {"step": 0, "y": 70}}` + "\n")
	in.WriteString(`{"op": "call", "call": {"kind": "dig"}}` + "\n")
	for i := 1; i <= 8; i++ { // digging down one block a step
		fmt.Fprintf(&in, `{"op": "step", "item": 0, "action": {"attack": 1}, "state": {"step": %d, "y": %d}}`+"\n", i, 70-i)
	}
	in.WriteString(`{"op": "step", "item": 1, "action": {"back": 1}, "state": {"step": 9, "y": 62}}` + "\n")
	in.WriteString(`{"op": "step", "item": 2, "action": {"back": 1}, "state": {"step": 10, "y": 62}}` + "\n") // outside the new plan
	in.WriteString(`{"op": "step", "action": {"back": 1}, "state": {"step": 10, "y": 62}}` + "\n")            // item 1 again
	in.WriteString(`{"op": "end"}` + "\n")
	in.WriteString(`{"op": "call", "call": {"kind": "tidy"}}` + "\n")
	for i := 11; i <= 14; i++ {
		fmt.Fprintf(&in, `{"op": "step", "state": {"step": %d, "y": 62}}`+"\n", i)
	}
	in.WriteString(`{"op": "step", "item": 1, "action": {"wave": 1}, "state": {"step": 15, "y": 62}}` + "\n")
	in.WriteString(`{"op": "step", "item": 2, "state": {"step": 16, "y": 62}}` + "\n")
	in.WriteString(`{"op": "end"}` + "\n")
	in.WriteString(`{"op": "begin", "call": {"kind": "walk"}}` + "\n")
	in.WriteString(`{"op": "step", "item": 0, "state": {"step": 17, "y": 62}}` + "\n")
	var out strings.Builder
	bad, err := serveLines(rec, strings.NewReader(in.String()), &out)
	if err != nil {
		t.Fatal(err)
	}
	reps := strings.Split(strings.TrimSpace(out.String()), "\n")
	if bad != 2 || len(reps) != 24 {
		t.Fatalf("%d bad, %d replies:\n%s", bad, len(reps), out.String())
	}
	for i := 2; i <= 8; i++ {
		if strings.Contains(reps[i], "reflexes") {
			t.Errorf("reply %d: a reflex fired before the 8th step: %s", i+1, reps[i])
		}
	}
	want := map[int]string{
		9:  `"reflexes":[{"note":"fell","reflex":"deep","step":8,"stop":true}],"stop":true`,
		10: `"op":"step","episode":"ep_000001"}`,
		11: `"error":"line 12: step: item 2 is outside the plan (2 item(s))"`,
		12: `"op":"step","episode":"ep_000001"}`,
		18: `"reflexes":[{"note":"waving","reflex":"wave","step":14,"stop":false}]`,
		23: `"error":"line 24: step: item belongs to an episode opened by the call op"`,
	}
	for i, w := range want {
		if !strings.Contains(reps[i], w) {
			t.Errorf("reply %d: %s\nwant %s", i+1, reps[i], w)
		}
	}
	if !strings.Contains(reps[9], `"actions":[{"action":{"attack":1},"repeat":8},{"action":{"back":1},"repeat":2}]`) {
		t.Errorf("the stop's new plan: %s", reps[9])
	}
	if !strings.Contains(reps[18], `"actions":[{"args":{},"procedure":"collect_drops"},{"action":{"wave":1},"repeat":1},{"args":{},"procedure":"look"}]`) || strings.Contains(reps[18], `"stop":true`) {
		t.Errorf("the inserted plan: %s", reps[18])
	}

	act := readJSON(t, filepath.Join(s.Root, "episodes", "ep_000001", "action.json"))
	p := act["procedure"].(map[string]any)
	fired, _ := json.Marshal(p["reflexes"])
	if p["outcome"] != "stopped" || p["done"] != 2.0 || string(fired) != `[{"note":"fell","reflex":"deep","step":8,"stop":true}]` || len(p["expansion"].([]any)) != 3 {
		t.Errorf("dig action.json procedure: %v", p)
	}
	oc := readJSON(t, filepath.Join(s.Root, "episodes", "ep_000001", "outcome.json"))
	if notes, _ := json.Marshal(oc["notes"]); string(notes) != `["[REFLEX deep] fell -- the runner dropped the rest of your plan (2 action(s))."]` {
		t.Errorf("dig notes %s", notes)
	}
	act = readJSON(t, filepath.Join(s.Root, "episodes", "ep_000002", "action.json"))
	if p := act["procedure"].(map[string]any); p["outcome"] != "ok" || p["done"] != 3.0 || len(p["reflexes"].([]any)) != 1 {
		t.Errorf("tidy action.json procedure: %v", p)
	}
	entries, err := Catalog(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if (e.Name == "deep" || e.Name == "wave") && (e.Calls != 1 || e.LastOutcome != "fired") {
			t.Errorf("catalog %s: %+v", e.Name, e)
		}
	}
}

// TestProtocolNoReflexes: with Options.NoReflexes the call op checks
// nothing.
func TestProtocolNoReflexes(t *testing.T) {
	s := newStore(t)
	for name, body := range map[string]string{
		"procedures/tidy.sh": "#!/bin/sh\ncat >/dev/null\necho '{\"actions\": [{\"atom\": \"collect_drops\"}]}'\n",
		"reflexes/stop.sh":   "#!/bin/sh\ncat >/dev/null\necho '{\"stop\": true, \"note\": \"always\"}'\n",
	} {
		p := s.Path("mine", name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o755)
	}
	for k, off := range []bool{false, true} {
		rec, err := NewRecorder(s, Options{NoReflexes: off, Procedures: &Runner{Dir: s.Path("mine", "procedures"), Timeout: testTimeout}})
		if err != nil {
			t.Fatal(err)
		}
		var in strings.Builder
		in.WriteString(`{"op": "call", "call": {"kind": "tidy"}}` + "\n")
		for i := 1; i <= 4; i++ {
			fmt.Fprintf(&in, `{"op": "step", "state": {"step": %d}}`+"\n", 4*k+i)
		}
		in.WriteString(`{"op": "end"}` + "\n")
		var out strings.Builder
		if bad, err := serveLines(rec, strings.NewReader(in.String()), &out); err != nil || bad != 0 {
			t.Fatalf("%d bad, %v:\n%s", bad, err, out.String())
		}
		rec.Close()
		if got := strings.Contains(out.String(), `"reflex":"stop"`); got == off {
			t.Errorf("NoReflexes %v: fired %v:\n%s", off, got, out.String())
		}
	}
}

// TestCallLatestState: without CallOptions.State the procedure reads the
// recorder's latest state.
func TestCallLatestState(t *testing.T) {
	s := newStore(t)
	rec, err := NewRecorder(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if _, err := rec.Initial(State{Step: 7, Y: 42, Health: 13}, nil); err != nil {
		t.Fatal(err)
	}
	// echo.sh refuses with its stdin as the message
	r := &Runner{Dir: procDir(t, map[string]string{"echo.sh": "#!/bin/sh\ntr -d '\\n' >&2\nexit 1\n"}), Timeout: testTimeout}
	_, _, err = r.Call(context.Background(), rec, "echo", nil, nil, CallOptions{})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), `"step": 7`) || !strings.Contains(err.Error(), `"health": 13`) {
		t.Fatalf("the procedure did not read the latest state: %v", err)
	}
}

// TestProcedureWithoutShebang: an executable script without a #! line
// (which exec refuses with "exec format error") runs by its extension's
// interpreter, or by sh without a known extension, as a shell would; a
// #! line still wins over the extension.
func TestProcedureWithoutShebang(t *testing.T) {
	needPython(t)
	jump := `{"actions": [{"action": {"jump": 1}, "repeat": %s}]}`
	files := map[string]string{
		"bare_sh.sh":  "# bare_sh: no #! line\ncat >/dev/null\nn=2\necho '" + strings.Replace(jump, "%s", "'$n'", 1) + "'\n",
		"bare_py.py":  "\"\"\"bare_py: no #! line.\"\"\"\nimport json, sys\njson.load(sys.stdin)\nprint(json.dumps({\"actions\": [{\"action\": {\"jump\": 1}, \"repeat\": 1 + 2}]}))\n",
		"bare_noext":  "cat >/dev/null\necho '" + strings.Replace(jump, "%s", "4", 1) + "'\n",
		"bang_py.sh":  "#!/usr/bin/env python3\nimport json\nprint(json.dumps({\"actions\": [{\"action\": {\"jump\": 1}, \"repeat\": 5}]}))\n",
		"plain_py.py": "print('" + strings.Replace(jump, "%s", "6", 1) + "')\n", // not executable
	}
	dir := procDir(t, files)
	for name := range files {
		if name == "plain_py.py" {
			continue
		}
		if err := os.Chmod(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r := &Runner{Dir: dir, Timeout: testTimeout}
	for name, repeat := range map[string]int{"bare_sh": 2, "bare_py": 3, "bare_noext": 4, "bang_py": 5, "plain_py": 6} {
		t.Run(name, func(t *testing.T) {
			res, err := r.Run(context.Background(), name, nil, []byte(`{}`))
			if err != nil {
				t.Fatalf("run %s: %v", name, err)
			}
			got, _ := json.Marshal(res.Entries())
			want := fmt.Sprintf(`[{"action":{"jump":1},"repeat":%d}]`, repeat)
			if string(got) != want {
				t.Errorf("%s: got %s, want %s", name, got, want)
			}
		})
	}
}
