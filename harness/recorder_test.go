package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
)

func newStore(t testing.TB) *episodes.Store {
	t.Helper()
	s, err := episodes.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func st(step int64, x, y, z float64) State {
	return State{Step: step, X: x, Y: y, Z: z, Health: 20, Inventory: map[string]int{}}
}

// TestFixtureSummaries rebuilds rows of the paper run from their start and
// end states and checks the summary the recorder computes is the one the
// paper's harness wrote.
func TestFixtureSummaries(t *testing.T) {
	cases := []struct {
		call       Call
		start, end State
		want       string
	}{
		{Call{Kind: "go_to", Args: []Arg{{"x", 3170.5}, {"z", 1402.5}, {"within", 1.5}, {"n", 140}}, Budget: 140},
			st(641, 3182.699999988079, 69.0, 1400.300000011921), st(681, 3174.300000011921, 69.7531999805212, 1401.699999988079),
			"[ACTION] go_to(x=3170.5,z=1402.5,within=1.5,n=140) -> 140 ticks: moved 8.5, descended -0.8"},
		{Call{Raw: map[string]any{"attack": 1}, Budget: 24},
			st(576, 3182.7, 69, 1400.3), st(600, 3182.7, 69, 1400.3),
			`[ACTION] {"attack":1} x24: moved 0.0`},
		{Call{Kind: "travel", Args: []Arg{{"n", 30}, {"sprint", false}}, Budget: 30},
			st(2757, 0, 69, 0), func() State { s := st(2787, 4.24, 71.02, 0); s.Inventory = map[string]int{"dirt": 1}; return s }(),
			"[ACTION] travel(n=30,sprint=False) -> 30 ticks: moved 4.2, descended -2.0, inv {'dirt': 1}"},
		{Call{Kind: "use_at", Args: []Arg{{"x", 3168}, {"item", "water_bucket"}}, Budget: 53},
			func() State { s := st(2318, 0, 64, 0); s.Inventory = map[string]int{"water_bucket": 1}; return s }(),
			func() State {
				s := st(2327, 0, 64, 0)
				s.Inventory = map[string]int{"bucket": 1}
				s.Milestones = []string{"water_1"}
				return s
			}(),
			"[ACTION] use_at(x=3168,item=water_bucket) -> 53 ticks: moved 0.0, inv {'bucket': 1, 'water_bucket': -1}, milestone ['water_1']"},
		{Call{Kind: "stow_items", Args: []Arg{{"grid", "2x2"}, {"cells", []any{0}}}, Budget: 57},
			st(1, 0, 0, 0), st(2, 0, 0.5, 0), // |descended| 0.5 is not shown
			"[ACTION] stow_items(grid=2x2,cells=[0]) -> 57 ticks: moved 0.0"},
	}
	for _, c := range cases {
		o := Compute(c.call, c.start, []Step{{State: c.end}}, nil, Options{})
		if got := Summary(c.call, o); got != c.want {
			t.Errorf("summary\n got %s\nwant %s", got, c.want)
		}
	}
	// The paper's raw action kind.
	if k := (Call{Raw: map[string]any{"jump": 1, "forward": 1, "camera": []any{0, 0}}}).ActionKind(); k != "camera+forward+jump" {
		t.Errorf("ActionKind = %s", k)
	}
}

// scenario records one episode of hand-made steps and returns the row, the
// outcome.json and the grid rows written for it.
type scenario struct {
	name     string
	call     Call
	steps    []Step
	notes    []string
	tags     []string // want
	grid     []string // want kinds, in order
	check    func(t *testing.T, o map[string]any, grid []episodes.GridRow)
	gridWant func(t *testing.T, grid []episodes.GridRow)
}

func TestScenarios(t *testing.T) {
	start := st(0, 0.5, 64, 0.5)
	walk := func(n int, dx float64) []Step {
		var s []Step
		for i := 1; i <= n; i++ {
			s = append(s, Step{Action: map[string]any{"forward": 1}, State: st(int64(i), 0.5+dx*float64(i), 64, 0.5)})
		}
		return s
	}
	hurt := st(2, 0.5, 64, 0.5)
	hurt.Health = 17
	dead := st(3, 0.5, 64, 0.5)
	dead.Health = 0
	gui := st(1, 0.5, 64, 0.5)
	gui.GUIOpen = true
	gui2 := gui
	gui2.Step = 2
	inv := st(1, 0.5, 64, 0.5)
	inv.Inventory = map[string]int{"oak_log": 2}
	ms := st(1, 0.5, 64, 0.5)
	ms.Milestones = []string{"log_1"}
	cases := []scenario{
		{name: "stuck", call: Call{Raw: map[string]any{"forward": 1}}, steps: []Step{
			{Action: map[string]any{"forward": 1}, State: st(1, 0.5, 64, 0.5)},
			{Action: map[string]any{"forward": 1}, State: st(2, 0.52, 64, 0.5)},
		}, tags: []string{"stuck"}, grid: []string{"walked", "blocked"},
			check: func(t *testing.T, o map[string]any, g []episodes.GridRow) {
				if o["stuck"] != true {
					t.Error("outcome stuck != true")
				}
				// yaw 0 faces +z: the blocked cell is ahead in z.
				if g[1].Cell != [3]int{0, 64, 1} {
					t.Errorf("blocked cell %v", g[1].Cell)
				}
			}},
		{name: "walking is not stuck", call: Call{Kind: "go_to", Args: []Arg{{"x", 5.5}}}, steps: walk(5, 1),
			tags: []string{}, grid: []string{"walked", "walked", "walked", "walked", "walked"},
			check: func(t *testing.T, o map[string]any, g []episodes.GridRow) {
				if o["moved"] != 5.0 || g[4].Cell != [3]int{5, 64, 0} || g[4].Step != 5 {
					t.Errorf("moved %v last cell %v", o["moved"], g[4])
				}
			}},
		{name: "looking around is not stuck", call: Call{Kind: "look", Args: []Arg{{"yaw", 90}}}, steps: []Step{{State: st(1, 0.5, 64, 0.5)}},
			tags: []string{}, grid: []string{"walked"}},
		{name: "hazard and death", call: Call{Kind: "wait"}, steps: []Step{
			{State: st(1, 0.5, 64, 0.5)},
			{State: hurt, Events: []string{"hurt lava 3"}},
			{State: dead, Events: []string{"death lava"}},
		}, tags: []string{"damage", "death"}, grid: []string{"walked", "hazard", "hazard"},
			check: func(t *testing.T, o map[string]any, g []episodes.GridRow) {
				if *g[1].Amount != 3 || g[1].Cause != "lava" || *g[2].Amount != 17 {
					t.Errorf("hazard rows %+v %+v", g[1], g[2])
				}
				if o["damage"] != 20.0 || o["died"] != true {
					t.Errorf("damage %v died %v", o["damage"], o["died"])
				}
			}},
		{name: "inventory change", call: Call{Kind: "chop"}, steps: []Step{{State: inv, Events: []string{"mine_block oak_log +1", "pickup oak_log +2"}}},
			notes: []string{"chopped"}, tags: []string{"inventory_changed", "broke", "note"}, grid: []string{"walked"},
			check: func(t *testing.T, o map[string]any, g []episodes.GridRow) {
				if d, _ := o["inventory_delta"].(map[string]any); d["oak_log"] != 2.0 {
					t.Errorf("inventory_delta %v", o["inventory_delta"])
				}
			}},
		{name: "milestone", call: Call{Kind: "chop"}, steps: []Step{{State: ms, Events: []string{"MILESTONE log_1 verified"}}},
			tags: []string{"milestone"}, grid: []string{"walked"},
			check: func(t *testing.T, o map[string]any, g []episodes.GridRow) {
				if m, _ := o["milestone_transition"].([]any); len(m) != 1 || m[0] != "log_1" {
					t.Errorf("milestone_transition %v", o["milestone_transition"])
				}
			}},
		{name: "gui open", call: Call{Kind: "open_inventory"}, steps: []Step{{State: gui}}, tags: []string{"gui"}, grid: []string{"walked"}},
		{name: "placed and opened", call: Call{Kind: "place_and_open", Args: []Arg{{"item", "crafting_table"}}}, steps: []Step{
			{State: st(1, 0.5, 64, 0.5), Events: []string{"place_block crafting_table +1"}},
			{State: gui2, Cells: []Cell{{X: 0, Y: 64, Z: 1, Kind: "opened", Item: "crafting_table"}}},
		}, tags: []string{"gui", "placed"}, grid: []string{"walked", "placed", "opened"},
			check: func(t *testing.T, o map[string]any, g []episodes.GridRow) {
				if g[1].Item != "crafting_table" || g[1].Pose == nil || g[2].Cell != [3]int{0, 64, 1} {
					t.Errorf("placed/opened rows %+v %+v", g[1], g[2])
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			r, err := NewRecorder(s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if _, err := r.Initial(start, nil); err != nil {
				t.Fatal(err)
			}
			if err := r.Begin(c.call); err != nil {
				t.Fatal(err)
			}
			for _, s := range c.steps {
				if err := r.Step(s); err != nil {
					t.Fatal(err)
				}
			}
			for _, n := range c.notes {
				r.Note(n)
			}
			row, err := r.End()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(row.Tags, c.tags) {
				t.Errorf("tags %q, want %q", row.Tags, c.tags)
			}
			var o map[string]any
			b, _ := os.ReadFile(s.Path(row.Path, "outcome.json"))
			if err := json.Unmarshal(b, &o); err != nil {
				t.Fatal(err)
			}
			if tags, _ := json.Marshal(o["tags"]); !strings.Contains(string(tags), strings.Join(c.tags, `","`)) {
				t.Errorf("outcome tags %s", tags)
			}
			var grid []episodes.GridRow
			var kinds []string
			episodes.ReadGrid(s.Path(episodes.GridFileName), 0, func(g episodes.GridRow) error {
				grid = append(grid, g)
				kinds = append(kinds, g.Kind)
				return nil
			}, func(e *episodes.RowError) { t.Error(e) })
			if !slices.Equal(kinds, c.grid) {
				t.Errorf("grid kinds %q, want %q", kinds, c.grid)
			}
			if c.check != nil {
				c.check(t, o, grid)
			}
			rep, _ := episodes.Verify(s)
			if !rep.OK() {
				t.Errorf("verify: %v", rep.Issues)
			}
		})
	}
}

// TestRecordedFilesAndLog checks the files of a recorded episode: state,
// action and outcome in MarshalPyIndent form, the log block, frames,
// steps.jsonl and now/.
func TestRecordedFilesAndLog(t *testing.T) {
	s := newStore(t)
	r, err := NewRecorder(s, Options{Frames: true, Task: "get wood", Clock: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	img := image.NewRGBA(image.Rect(0, 0, 8, 4))
	img.Set(1, 1, color.RGBA{255, 0, 0, 255})
	if _, err := r.Initial(st(0, 3170.5, 69, 1402.5), img); err != nil {
		t.Fatal(err)
	}
	r.Begin(Call{Kind: "harvest_tree", Args: []Arg{{"logs", 4}, {"n", 400}}, Budget: 400, Plan: []string{"chop the tree"}, Header: []string{"Plan Step 1/1"}, Meta: map[string]any{"turn": 1}})
	s1 := st(1, 3171.5, 69, 1402.5)
	s2 := st(2, 3182.7, 69, 1400.3)
	s2.Yaw = 175
	s2.Inventory = map[string]int{"bucket": 1, "dirt": 7}
	r.Step(Step{Action: map[string]any{"forward": 1}, State: s1, Frame: img})
	r.Step(Step{Action: map[string]any{"attack": 1}, State: s2, Events: []string{"mine_block dirt +1"}, Frame: img})
	r.Note("harvest_tree: 0 log(s)\ncollected")
	row, err := r.End()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Step(Step{State: s2}); !errors.Is(err, ErrNoEpisode) {
		t.Fatalf("step outside an episode: %v", err)
	}
	r.Close()
	wantRow := `{"action_kind": "harvest_tree", "attachment": null, "events": ["mine_block dirt +1"], "first_step": 0, "gui_open": false, "id": "ep_000001", "image": "episodes/ep_000001/observation/image.png", "inventory_delta": {"bucket": 1, "dirt": 7}, "kind": "episode", "last_step": 2, "life": 1, "note": "harvest_tree: 0 log(s)\ncollected", "observation_hash": null, "path": "episodes/ep_000001", "summary": "[ACTION] harvest_tree(logs=4,n=400) -> 400 ticks: moved 12.4, inv {'bucket': 1, 'dirt': 7}", "tags": ["inventory_changed", "broke", "note"], "time": "2026-01-02T03:04:05.000Z", "x": 3170.5, "y": 69.0, "z": 1402.5}`
	if string(row.Raw) != wantRow {
		t.Errorf("row\n got %s\nwant %s", row.Raw, wantRow)
	}
	log, _ := os.ReadFile(s.Path("logs.txt"))
	wantLog := `================================================================================
Action 0 | Step 0 | INITIAL STATE

Task: get wood
[STATE] pos=(3170.50, 69.00, 1402.50) pitch=0 yaw=0 moved=0.00
================================================================================
Action 1 | Step 2 | Plan Step 1/1

[PLAN] chop the tree
[ACTION] harvest_tree(logs=4,n=400) -> 400 ticks
[STATE] pos=(3182.70, 69.00, 1400.30) pitch=0 yaw=175 moved=12.40
[GUI] open=False
[INV] bucket +1, dirt +7
[EVENT] mine_block dirt +1
[NOTE] harvest_tree: 0 log(s) collected
`
	if string(log) != wantLog {
		t.Errorf("log\n%s\nwant\n%s", log, wantLog)
	}
	for _, f := range []string{"state/state.json", "action.json", "outcome.json"} {
		b, err := os.ReadFile(s.Path(row.Path, f))
		if err != nil {
			t.Fatal(err)
		}
		var v any
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		d.Decode(&v)
		re, _ := episodes.MarshalPyIndent(v)
		if !bytes.Equal(re, b) {
			t.Errorf("%s is not in MarshalPyIndent form", f)
		}
	}
	act, _ := os.ReadFile(s.Path(row.Path, "action.json"))
	if !strings.Contains(string(act), `"procedure": "harvest_tree"`) || !strings.Contains(string(act), `"turn": 1`) {
		t.Errorf("action.json: %s", act)
	}
	for _, f := range []string{"observation/image.png", "frames/000001.png", "frames/000002.png"} {
		if _, err := os.Stat(s.Path(row.Path, f)); err != nil {
			t.Error(err)
		}
	}
	sj, _ := os.ReadFile(s.Path(row.Path, "steps.jsonl"))
	if n := bytes.Count(sj, []byte("\n")); n != 2 || !bytes.Contains(sj, []byte(`"frame": "frames/000002.png"`)) {
		t.Errorf("steps.jsonl: %s", sj)
	}
	now, _ := os.ReadFile(s.Path("now", "state.json"))
	if !strings.Contains(string(now), `"step": 2`) {
		t.Errorf("now/state.json: %s", now)
	}
	if _, err := os.Stat(s.Path("now", "frame.png")); err != nil {
		t.Error(err)
	}
	// Reopening resumes where the last episode ended.
	r, err = NewRecorder(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.NextID() != "ep_000002" {
		t.Fatalf("NextID %s", r.NextID())
	}
	r.Begin(Call{Kind: "wait"})
	row, err = r.End()
	if err != nil || row.FirstStep != 2 || row.X != 3182.7 || !strings.Contains(row.Summary, "moved 0.0") {
		t.Fatalf("resumed row %s %v", row.Raw, err)
	}
}

func TestRecorderErrors(t *testing.T) {
	s := newStore(t)
	r, err := NewRecorder(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewRecorder(s, Options{}); !errors.Is(err, episodes.ErrLocked) {
		t.Fatalf("second recorder: %v", err)
	}
	if err := r.Begin(Call{}); err == nil {
		t.Fatal("empty call accepted")
	}
	if _, err := r.End(); !errors.Is(err, ErrNoEpisode) {
		t.Fatal(err)
	}
	r.Begin(Call{Kind: "x"})
	if err := r.Begin(Call{Kind: "y"}); !errors.Is(err, ErrInEpisode) {
		t.Fatal(err)
	}
	if _, err := r.End(); err == nil {
		t.Fatal("episode without any state accepted")
	}
	r.Step(Step{State: st(5, 0, 0, 0)})
	if err := r.Step(Step{State: st(4, 0, 0, 0)}); err == nil {
		t.Fatal("step going back accepted")
	}
	if _, err := r.Initial(st(0, 0, 0, 0), "frame"); err == nil {
		t.Fatal("initial inside an episode accepted")
	}
	r.Close()
	if rows, _ := (episodes.Life{Root: s.Root}).AllRows(); len(rows) != 0 {
		t.Fatalf("closing inside an episode wrote %d rows", len(rows))
	}
}

func TestServe(t *testing.T) {
	s := newStore(t)
	r, _ := NewRecorder(s, Options{})
	defer r.Close()
	var png bytes.Buffer
	pngEnc.Encode(&png, image.NewGray(image.Rect(0, 0, 2, 2)))
	framePath := filepath.Join(t.TempDir(), "f.png")
	os.WriteFile(framePath, png.Bytes(), 0o644)
	in := strings.Join([]string{
		`{"op":"initial","state":{"step":0,"x":0.5,"y":64,"z":0.5,"health":20},"frame_path":"` + framePath + `"}`,
		`{"op":"begin","call":{"kind":"go_to","args":{"z":3,"x":1.0},"budget":40},"id":7}`,
		`{"op":"step","action":{"forward":1},"state":{"step":1,"x":1.5,"y":64,"z":0.5,"health":20},"frame_png_b64":"aGVsbG8="}`,
		`{"op":"step","state":{"x":1}}`,
		``,
		`{"op":"step","action":{"forward":1},"state":{"step":2,"x":2.5,"y":64,"z":0.5,"health":20}}`,
		`{"op":"note","text":"there"}`,
		`{"op":"end"}`,
		`{"op":"end"}`,
	}, "\n")
	var out bytes.Buffer
	bad, err := serveLines(r, strings.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if bad != 3 || len(lines) != 8 {
		t.Fatalf("bad=%d replies=%d:\n%s", bad, len(lines), out.String())
	}
	var reps []Reply
	for _, l := range lines {
		var rp Reply
		json.Unmarshal([]byte(l), &rp)
		reps = append(reps, rp)
	}
	if !reps[1].OK || string(reps[1].ID) != "7" || reps[1].Episode != "ep_000001" {
		t.Errorf("begin reply %s", lines[1])
	}
	if reps[2].OK || !strings.Contains(reps[2].Error, "line 3: step 1: frame: not a complete PNG") {
		t.Errorf("bad frame reply %s", lines[2])
	}
	if reps[3].OK || reps[3].Error != `line 4: step: missing "state.step"` {
		t.Errorf("bad step reply %s", lines[3])
	}
	if reps[4].Line != 6 || !reps[4].OK {
		t.Errorf("line numbering: %s", lines[4])
	}
	if !reps[6].OK || !strings.Contains(string(reps[6].Row), `go_to(z=3,x=1.0) -> 40 ticks: moved 2.0`) {
		t.Errorf("end reply %s", lines[6])
	}
	if reps[7].OK || !strings.Contains(reps[7].Error, "line 9: end: no episode is open") {
		t.Errorf("second end %s", lines[7])
	}
	if _, err := os.Stat(s.Path("episodes/ep_000000/observation/image.png")); err != nil {
		t.Error(err)
	}
}

// --- crash safety ---------------------------------------------------------

// crashChild records episodes with frames until it is killed.
func crashChild(dir string) {
	s, err := episodes.Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	r, err := NewRecorder(s, Options{Frames: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	img := image.NewRGBA(image.Rect(0, 0, 64, 36))
	step := int64(0)
	if r.last != nil {
		step = r.last.Step
	} else {
		r.Initial(st(0, 0, 64, 0), img)
	}
	fmt.Println("ready")
	for i := 0; ; i++ {
		r.Begin(Call{Kind: "go_to", Args: []Arg{{"i", i}}})
		for j := 0; j < 4; j++ {
			step++
			s := st(step, float64(step)*0.3, 64, 0)
			s.Inventory = map[string]int{"log": int(step % 3)}
			if err := r.Step(Step{Action: map[string]any{"forward": 1}, State: s, Frame: img, Events: []string{"pickup log +1"}}); err != nil {
				os.Exit(4)
			}
		}
		r.Note(strings.Repeat("n", 3000))
		if _, err := r.End(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(5)
		}
	}
}

// indexRows counts the complete rows of the store's index.
func indexRows(t testing.TB, s *episodes.Store) int {
	n := 0
	if _, err := episodes.ScanFile(s.Path(episodes.IndexFileName), 0, func(episodes.Line) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitUntil polls ok until it holds (true) or d has passed (false).
func waitUntil(d time.Duration, ok func() bool) bool {
	for deadline := time.Now().Add(d); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

func TestCrashSafety(t *testing.T) {
	if dir := os.Getenv("MFM_TEST_CRASH_CHILD"); dir != "" {
		crashChild(dir)
		return
	}
	rounds := 60
	if testing.Short() {
		rounds = 20
	}
	s := newStore(t)
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	torn := 0
	for round := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashSafety$")
		cmd.Env = append(os.Environ(), "MFM_TEST_CRASH_CHILD="+s.Root)
		out, _ := cmd.StdoutPipe()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 6)
		if _, err := out.Read(buf); err != nil {
			cmd.Wait()
			t.Fatalf("round %d: child did not start: %v %s", round, err, stderr.String())
		}
		if round%5 == 4 {
			// Every fifth child records a few more episodes before it is
			// killed, so the store grows however loaded the machine is.
			before := indexRows(t, s)
			if !waitUntil(60*time.Second, func() bool { return indexRows(t, s) >= before+3 }) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("round %d: the child recorded fewer than 3 episodes in 60 s: %s", round, stderr.String())
			}
		}
		// The kill lands at a random moment of the recording: this sleep
		// picks the moment, it does not wait for anything.
		time.Sleep(time.Duration(2000+rng.IntN(60_000)) * time.Microsecond)
		cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("round %d: child exited by itself: %v %s", round, err, stderr.String())
		}
		// Readers: the store opens, every visible row parses, every
		// indexed episode is complete (torn tails are allowed here).
		s2, err := episodes.Open(s.Root)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := episodes.Verify(s2)
		if err != nil {
			t.Fatal(err)
		}
		for _, is := range rep.Issues {
			if is.Severity == episodes.Problem && !is.Repairable {
				t.Fatalf("round %d: %s", round, is)
			}
			if is.Repairable && strings.Contains(is.Msg, "torn") {
				torn++
			}
		}
		_, err = episodes.ReadRows(s2.Path(episodes.IndexFileName), 0, func(episodes.Row, episodes.Line) error { return nil },
			func(e *episodes.RowError) { t.Fatalf("round %d: torn row visible: %v", round, e) })
		if err != nil {
			t.Fatal(err)
		}
		if round%10 == 9 {
			if _, err := episodes.Repair(s2); err != nil {
				t.Fatal(err)
			}
			if rep, _ := episodes.Verify(s2); !rep.OK() {
				t.Fatalf("round %d: after repair: %v", round, rep.Issues)
			}
		}
	}
	if _, err := episodes.Repair(s); err != nil {
		t.Fatal(err)
	}
	rep, _ := episodes.Verify(s)
	if !rep.OK() || rep.Rows < 10 {
		t.Fatalf("final: rows=%d issues=%v", rep.Rows, rep.Issues)
	}
	t.Logf("%d rounds, %d index rows, %d grid rows, %d torn tails seen", rounds, rep.Rows, rep.GridRows, torn)
}
