package harness

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/episodes"
)

// serveLines runs Serve with no options and returns the number of
// rejected lines.
func serveLines(r *Recorder, in io.Reader, out io.Writer) (int, error) {
	res, err := Serve(r, in, out, ServeOptions{})
	return res.Rejected, err
}

// session runs lines through a fresh recorder on a new store and returns
// the store, the replies and the result. The recorder is closed.
func session(t *testing.T, opt ServeOptions, lines ...string) (*episodes.Store, []Reply, ServeResult) {
	t.Helper()
	s := newStore(t)
	r, err := NewRecorder(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := Serve(r, strings.NewReader(strings.Join(lines, "\n")+"\n"), &out, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	var reps []Reply
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var rp Reply
		if err := json.Unmarshal([]byte(l), &rp); err != nil {
			t.Fatalf("reply %q: %v", l, err)
		}
		reps = append(reps, rp)
	}
	return s, reps, res
}

func verifyClean(t *testing.T, s *episodes.Store) {
	t.Helper()
	rep, err := episodes.Verify(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range rep.Issues {
		if i.Severity == episodes.Problem {
			t.Errorf("fsck: %s", i)
		}
	}
}

// TestMissingStateFields: a state field left out of a step keeps its value
// from the latest state: no death, no fall, no emptied inventory, and now/
// shows the carried values. An explicit value (0, {}) is taken as given.
func TestMissingStateFields(t *testing.T) {
	s, reps, res := session(t, ServeOptions{},
		`{"op":"initial","state":{"step":0,"x":0.5,"y":64,"z":0.5,"yaw":90,"health":20,"inventory":{"log":3},"milestones":["log_1"],"gui_open":true,"extra":{"hotbar":["axe"]}}}`,
		`{"op":"begin","call":{"kind":"look"}}`,
		`{"op":"step","state":{"step":1}}`,
		`{"op":"step","state":{"step":2,"x":1.5,"health":null}}`,
		`{"op":"end"}`,
		`{"op":"begin","call":{"kind":"drop_all"}}`,
		`{"op":"step","state":{"step":3,"inventory":{},"health":0}}`,
		`{"op":"end"}`,
	)
	if !res.OK() {
		t.Fatalf("%+v %+v", res, reps)
	}
	out := readJSON(t, s.Path("episodes/ep_000001/outcome.json"))
	if out["died"] != false || out["damage"] != 0.0 || out["descended"] != 0.0 || len(out["inventory_delta"].(map[string]any)) != 0 || out["milestone_transition"] != nil {
		t.Errorf("a step without health, y, inventory or milestones changed them: %v", out)
	}
	end := out["end_state"].(map[string]any)
	if end["vitals"].(map[string]any)["health"] != 20.0 || end["pos"].(map[string]any)["y"] != 64.0 || end["pos"].(map[string]any)["yaw"] != 90.0 ||
		end["pos"].(map[string]any)["x"] != 1.5 || end["gui_open"] != true || end["hotbar"] == nil {
		t.Errorf("end state did not carry the fields over: %v", end)
	}
	now := readJSON(t, s.Path("now/state.json"))
	if now["vitals"].(map[string]any)["health"] != 0.0 || len(now["inventory"].(map[string]any)) != 0 {
		t.Errorf("explicit 0 and {} were not taken: now/state.json %v", now)
	}
	out2 := readJSON(t, s.Path("episodes/ep_000002/outcome.json"))
	if out2["died"] != true || !slices.Contains(toStrings(out2["tags"]), "inventory_changed") {
		t.Errorf("explicit health 0 and inventory {}: %v", out2)
	}
	verifyClean(t, s)
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestFirstStateOfLife: the first state of a life has nothing to carry
// over: its missing fields are zero, and a field given later is not a
// loss (health first given as 20 is no damage).
func TestFirstStateOfLife(t *testing.T) {
	s, reps, res := session(t, ServeOptions{},
		`{"op":"begin","call":{"kind":"walk"}}`,
		`{"op":"step","state":{"step":1,"x":1}}`,
		`{"op":"step","state":{"step":2,"x":2,"health":20}}`,
		`{"op":"end"}`,
	)
	if !res.OK() {
		t.Fatalf("%+v", reps)
	}
	out := readJSON(t, s.Path("episodes/ep_000000/outcome.json"))
	if out["damage"] != 0.0 || out["died"] != false {
		t.Errorf("%v", out)
	}
}

// TestRequestErrors: exact field names, each error naming where; wrong
// types, cells, fields of another op.
func TestRequestErrors(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`{"op":"step","State":{"step":1}}`, `step: unknown field "State" in the request (field names are case-sensitive: "state")`},
		{`{"Op":"step"}`, `missing "op"`},
		{`{"op":"Step","state":{"step":1}}`, `unknown op "Step" (want initial, begin, call, step, note, end, abort or life)`},
		{`{"op":"step","state":{"step":1,"Health":3}}`, `unknown field "Health" in state (field names are case-sensitive: "health")`},
		{`{"op":"step","state":{"step":1,"pos":[1,2,3]}}`, `unknown field "pos" in state (want step, x, y, z, yaw, pitch, inventory, health, gui_open, milestones, extra)`},
		{`{"op":"step","state":{"step":1},"cells":[{"cell":[0,1,2],"kind":"placed"},{"cell":[0,1,2],"kind":"placed"},{"cell":[0,1,2],"kind":"placed","pos":1}]}`, `unknown field "pos" in cells[2] (want cell, kind, item)`},
		{`{"op":"step","state":{"step":1},"cells":[{"cell":[0,64],"kind":"placed"}]}`, `cells[0].cell: want [x, y, z], three integers (block coordinates), got 2 value(s)`},
		{`{"op":"step","state":{"step":1},"cells":[{"cell":[0,64.5,1],"kind":"placed"}]}`, `cells[0].cell[1]: want an integer, got the number 64.5`},
		{`{"op":"step","state":{"step":1},"cells":[{"cell":[0,64,1],"kind":"lava_lake"}]}`, `cells[0].kind: "lava_lake" is not a kind a harness gives (want placed, opened, blocked or water`},
		{`{"op":"step","state":{"step":1},"cells":[{"cell":[0,64,1],"kind":"walked"}]}`, `"walked" is not a kind a harness gives`},
		{`{"op":"step","state":{"step":1},"cells":[{"cell":[0,64,1]}]}`, `cells[0]: missing "kind" (want placed, opened, blocked or water)`},
		{`{"op":"step","state":{"step":1,"health":"full"}}`, `state.health: want a number, got a string`},
		{`{"op":"step","state":{"step":1.5}}`, `state.step: want an integer, got the number 1.5`},
		{`{"op":"step","state":{"step":1,"inventory":{"log":1.5}}}`, `state.inventory.log: want an integer, got the number 1.5`},
		{`{"op":"step","state":{"step":1,"x":1,"x":2}}`, `state: field "x" given twice`},
		{`{"op":"step","state":{"x":1}}`, `step: missing "state.step"`},
		{`{"op":"step","state":{"step":null}}`, `step: missing "state.step"`},
		{`{"op":"begin","call":{"kind":"go"},"state":{"step":1}}`, `begin: field "state" does not belong to begin (begin takes call)`},
		{`{"op":"abort","text":"x"}`, `abort: field "text" does not belong to abort (abort takes nothing but op and id)`},
		{`{"op":"begin","call":{"kind":"go","raw":{"attack":1}}}`, `"kind" (a procedure's name) or "raw" (a low-level action), one of the two`},
		{`{"op":"begin","call":{"kind":"go","Args":{}}}`, `unknown field "Args" in call (field names are case-sensitive: "args")`},
		{`{"op":"end","done":-1}`, `done: want the number of plan items executed, 0 or more, got -1`},
		{`{"op":"note","text":""}`, `note: missing "text"`},
		{`{"op":"step","state":{"step":1}} {"op":"end"}`, `more than one JSON value`},
		{`["op","step"]`, `the request: want a JSON object, got a list`},
		{`{"op":"step","state":{"step":1},"frame_path":"a.png","frame_png_b64":"eA=="}`, `give frame_png_b64 or frame_path, not both`},
	} {
		_, err := ParseRequest([]byte(c.line))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got  %v\n want %s", c.line, err, c.want)
		}
	}
}

// TestReplyKeepsID: a line that cannot be parsed still gets its id back
// when the id comes before the damage.
func TestReplyKeepsID(t *testing.T) {
	_, reps, res := session(t, ServeOptions{},
		`{"id":"a1","op":"step","state":{"step":`,
		`{"id":3,"op":"bogus"}`,
		`{"op":"begin","id":{"turn":4},"State":{}}`,
		`{"op":"begin","call":{"kind":"x"},"id":"ok"}`,
		`{"op":"begin","call":{"kind":"y"},"id":"again"}`,
		`not json`,
	)
	if res.Rejected != 5 {
		t.Fatalf("%+v", res)
	}
	for i, want := range []string{`"a1"`, `3`, `{"turn":4}`, `"ok"`, `"again"`, ``} {
		if string(reps[i].ID) != want {
			t.Errorf("reply %d: id %s, want %s (%+v)", i, reps[i].ID, want, reps[i])
		}
	}
	if reps[1].Op != "" || !strings.Contains(reps[1].Error, `unknown op "bogus"`) {
		t.Errorf("%+v", reps[1])
	}
	// errors name ops, not Go functions
	if e := reps[4].Error; e != "line 5: begin: an episode is open (end or abort closes it)" {
		t.Errorf("begin in an episode: %q", e)
	}
}

// TestErrorsNameOps: errors outside or inside an episode name the ops
// that fix them.
func TestErrorsNameOps(t *testing.T) {
	_, reps, _ := session(t, ServeOptions{},
		`{"op":"step","state":{"step":1}}`,
		`{"op":"note","text":"x"}`,
		`{"op":"end"}`,
		`{"op":"abort"}`,
		`{"op":"begin","call":{"kind":"x"}}`,
		`{"op":"end"}`,
	)
	want := []string{
		"line 1: step: no episode is open (begin or call opens one)",
		"line 2: note: no episode is open (begin or call opens one)",
		"line 3: end: no episode is open (begin or call opens one)",
		"line 4: abort: no episode is open (begin or call opens one)",
		"",
		"line 6: end: the episode has no state (no initial, no earlier episode, no step)",
	}
	for i, w := range want {
		if reps[i].Error != w {
			t.Errorf("reply %d: %q, want %q", i, reps[i].Error, w)
		}
	}
}

func pngBytes(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	var b bytes.Buffer
	if err := pngEnc.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestFramesDecodedFully: a truncated PNG (valid header) is refused on
// record, given as base64 or as a path, and in Go; a relative frame_path
// is resolved against ServeOptions.FrameDir.
func TestFramesDecodedFully(t *testing.T) {
	good := pngBytes(t, 32, 24)
	cut := good[:len(good)-20]
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "cut.png"), cut, 0o644)
	os.WriteFile(filepath.Join(dir, "good.png"), good, 0o644)
	b64 := base64.StdEncoding.EncodeToString
	s, reps, res := session(t, ServeOptions{FrameDir: dir},
		`{"op":"initial","state":{"step":0},"frame_png_b64":"`+b64(cut)+`"}`,
		`{"op":"initial","state":{"step":0},"frame_path":"good.png"}`,
		`{"op":"begin","call":{"kind":"look"}}`,
		`{"op":"step","state":{"step":1},"frame_path":"cut.png"}`,
		`{"op":"step","state":{"step":1},"frame_png_b64":"`+b64(cut)+`"}`,
		`{"op":"step","state":{"step":1},"frame_png_b64":"`+b64(good)+`"}`,
		`{"op":"end"}`,
	)
	if res.Rejected != 3 {
		t.Fatalf("%+v\n%+v", res, reps)
	}
	for _, i := range []int{0, 3, 4} {
		if !strings.Contains(reps[i].Error, "not a complete PNG") {
			t.Errorf("reply %d: %q", i, reps[i].Error)
		}
	}
	if b, _ := os.ReadFile(s.Path("episodes/ep_000000/observation/image.png")); !bytes.Equal(b, good) {
		t.Error("the relative frame_path was not read from FrameDir")
	}
	if out := readJSON(t, s.Path("episodes/ep_000001/outcome.json")); out["ticks"] != 1.0 {
		t.Errorf("ticks %v: a refused step was recorded", out["ticks"])
	}
	verifyClean(t, s)

	r, _ := NewRecorder(newStore(t), Options{})
	defer r.Close()
	if _, err := r.Initial(st(0, 0, 0, 0), cut); err == nil {
		t.Error("Go: a truncated initial frame was accepted")
	}
	r.Begin(Call{Kind: "x"})
	if err := r.Step(Step{State: st(1, 0, 0, 0), FramePNG: cut}); err == nil || !strings.Contains(err.Error(), "not a complete PNG") {
		t.Errorf("Go: truncated step frame: %v", err)
	}
	if err := r.Step(Step{State: st(1, 0, 0, 0), Cells: []Cell{{Kind: "lava"}}}); err == nil || !strings.Contains(err.Error(), `cells[0].kind: "lava" is not a kind a harness gives`) {
		t.Errorf("Go: cell kind lava: %v", err)
	}
}

// TestInputEndsInsideEpisode: the open episode is dropped, reported, and
// now/ goes back to the state before it.
func TestInputEndsInsideEpisode(t *testing.T) {
	good := pngBytes(t, 8, 8)
	other := pngBytes(t, 9, 9)
	b64 := base64.StdEncoding.EncodeToString
	s, _, res := session(t, ServeOptions{},
		`{"op":"initial","state":{"step":0,"x":1,"health":20},"frame_png_b64":"`+b64(good)+`"}`,
		`{"op":"begin","call":{"kind":"walk"}}`,
		`{"op":"step","state":{"step":1,"x":2},"frame_png_b64":"`+b64(other)+`"}`,
		`{"op":"step","state":{"step":2,"x":3}}`,
	)
	if res.OK() || res.Dropped != "ep_000001" || res.DroppedSteps != 2 || res.Rejected != 0 {
		t.Fatalf("%+v", res)
	}
	now := readJSON(t, s.Path("now/state.json"))
	if now["step"] != 0.0 || now["pos"].(map[string]any)["x"] != 1.0 {
		t.Errorf("now/state.json keeps the dropped step: %v", now)
	}
	if b, _ := os.ReadFile(s.Path("now/frame.png")); !bytes.Equal(b, good) {
		t.Error("now/frame.png keeps the dropped step's frame")
	}
	if _, err := os.Stat(s.Path("episodes/ep_000001")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dropped episode on disk: %v", err)
	}
	// an aborted first episode leaves no now/ at all
	s2, _, _ := session(t, ServeOptions{},
		`{"op":"begin","call":{"kind":"walk"}}`,
		`{"op":"step","state":{"step":1,"x":2},"frame_png_b64":"`+b64(other)+`"}`,
		`{"op":"abort"}`,
	)
	for _, f := range []string{"now/state.json", "now/frame.png"} {
		if _, err := os.Stat(s2.Path(f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after aborting the only episode: %v", f, err)
		}
	}
}

// TestLifeOp: life freezes the current life, the next starts empty with
// nothing carried over and may have its own initial; refused inside an
// episode.
func TestLifeOp(t *testing.T) {
	s, reps, res := session(t, ServeOptions{},
		`{"op":"initial","state":{"step":0,"x":5,"health":20,"inventory":{"log":2}}}`,
		`{"op":"begin","call":{"kind":"walk"}}`,
		`{"op":"life"}`,
		`{"op":"step","state":{"step":1,"x":6}}`,
		`{"op":"end"}`,
		`{"op":"life","id":"L"}`,
		`{"op":"initial","state":{"step":0,"x":100}}`,
		`{"op":"begin","call":{"kind":"walk"}}`,
		`{"op":"step","state":{"step":1,"x":101}}`,
		`{"op":"end"}`,
	)
	if res.Rejected != 1 || !strings.Contains(reps[2].Error, "life: an episode is open (end or abort closes it)") {
		t.Fatalf("%+v\n%+v", res, reps[2])
	}
	if rp := reps[5]; !rp.OK || rp.Life != 2 || rp.Previous != "previous/life_1" || string(rp.ID) != `"L"` {
		t.Errorf("life reply %+v", rp)
	}
	if rp := reps[6]; !rp.OK || rp.Episode != "ep_000000" {
		t.Errorf("initial of life 2: %+v", rp)
	}
	if _, err := os.Stat(s.Path("previous/life_1/episodes/ep_000001/outcome.json")); err != nil {
		t.Error(err)
	}
	st := readJSON(t, s.Path("episodes/ep_000001/state/state.json"))
	if st["vitals"].(map[string]any)["health"] != 0.0 || len(st["inventory"].(map[string]any)) != 0 {
		t.Errorf("life 2 carried life 1's state over: %v", st)
	}
	var row map[string]any
	json.Unmarshal(reps[9].Row, &row)
	if row["life"] != 2.0 {
		t.Errorf("row of life 2: %s", reps[9].Row)
	}
	verifyClean(t, s)
	rep, _ := episodes.Verify(s)
	if rep.Lives != 2 {
		t.Errorf("%d lives", rep.Lives)
	}
}

// TestInitialOnlyFirst: initial after any episode of the life is refused,
// a second initial too; in Go it wraps ErrNotFirst. A reopened store
// knows its life has rows.
func TestInitialOnlyFirst(t *testing.T) {
	s, reps, res := session(t, ServeOptions{},
		`{"op":"begin","call":{"kind":"walk"}}`,
		`{"op":"step","state":{"step":1,"x":6}}`,
		`{"op":"end"}`,
		`{"op":"initial","state":{"step":2}}`,
	)
	if res.Rejected != 1 || !strings.Contains(reps[3].Error, "initial: life 1 already has episodes (up to ep_000000): the initial episode can only be the first of a life (life starts a new one)") {
		t.Fatalf("%+v", reps[3])
	}
	_, reps, _ = session(t, ServeOptions{},
		`{"op":"initial","state":{"step":0}}`,
		`{"op":"initial","state":{"step":1}}`,
	)
	if reps[1].OK {
		t.Errorf("second initial accepted: %+v", reps[1])
	}
	r, err := NewRecorder(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Initial(st(5, 0, 0, 0), nil); !errors.Is(err, ErrNotFirst) {
		t.Errorf("initial after reopening a life with rows: %v", err)
	}
}

// TestStepsIncrease: an equal or earlier step number is refused, also
// the first step of an episode against its start.
func TestStepsIncrease(t *testing.T) {
	_, reps, res := session(t, ServeOptions{},
		`{"op":"initial","state":{"step":5}}`,
		`{"op":"begin","call":{"kind":"walk"}}`,
		`{"op":"step","state":{"step":5}}`,
		`{"op":"step","state":{"step":6}}`,
		`{"op":"step","state":{"step":6}}`,
		`{"op":"step","state":{"step":4}}`,
		`{"op":"end"}`,
	)
	if res.Rejected != 3 {
		t.Fatalf("%+v", reps)
	}
	for i, want := range map[int]string{
		2: "step 5: step numbers must increase (the episode starts at step 5)",
		4: "step 6: step numbers must increase (the previous step was 6)",
		5: "step 4: step numbers must increase (the previous step was 6)",
	} {
		if !strings.HasSuffix(reps[i].Error, want) {
			t.Errorf("reply %d: %q, want …%q", i, reps[i].Error, want)
		}
	}
}

// TestGivenBlockedOnce: a blocked cell the harness gives is stored once,
// not again as the recorder's own; a placed cell given beside a
// place_block event is stored once too, and a cell of another kind does
// not keep the event's placed row from being derived.
func TestGivenBlockedOnce(t *testing.T) {
	s, reps, res := session(t, ServeOptions{},
		`{"op":"initial","state":{"step":0,"x":0.5,"y":64,"z":0.5}}`,
		`{"op":"begin","call":{"kind":"walk"}}`,
		`{"op":"step","action":{"forward":1},"state":{"step":1},"cells":[{"cell":[0,64,1],"kind":"blocked"}]}`,
		`{"op":"step","action":{"forward":1},"state":{"step":2},"events":["place_block dirt"],"cells":[{"cell":[0,64,1],"kind":"placed","item":"dirt"}]}`,
		`{"op":"step","action":{"use":1},"state":{"step":3},"events":["place_block stone"],"cells":[{"cell":[5,64,5],"kind":"water"}]}`,
		`{"op":"end"}`,
	)
	if !res.OK() {
		t.Fatalf("%+v", reps)
	}
	b, _ := os.ReadFile(s.Path("grid.jsonl"))
	if n := strings.Count(string(b), `"kind": "blocked"`); n != 1 {
		t.Errorf("%d blocked rows:\n%s", n, b)
	}
	if n := strings.Count(string(b), `"kind": "placed"`); n != 2 || !strings.Contains(string(b), `"item": "stone", "kind": "placed"`) {
		t.Errorf("%d placed rows (want the given dirt and stone from its event beside a water cell):\n%s", n, b)
	}
}

// TestGoAPINewLife: Recorder.NewLife as the life op does.
func TestGoAPINewLife(t *testing.T) {
	s := newStore(t)
	r, _ := NewRecorder(s, Options{})
	defer r.Close()
	if _, err := r.Initial(st(0, 1, 2, 3), image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	frozen, err := r.NewLife()
	if err != nil || frozen.N != 1 {
		t.Fatalf("%+v %v", frozen, err)
	}
	for _, f := range []string{"now/state.json", "now/frame.png"} {
		if _, err := os.Stat(s.Path(f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after a new life: %v", f, err)
		}
	}
	if row, err := r.Initial(st(0, 1, 2, 3), nil); err != nil || row.ID != "ep_000000" {
		t.Fatalf("%v %v", row.ID, err)
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(`{"op":"step","state":{"step":1}}`))
	f.Add([]byte(`{"op":"step","state":{"step":1,"x":1.5,"inventory":{"log":2}},"cells":[{"cell":[0,1,2],"kind":"placed","item":"dirt"}],"id":"s1"}`))
	f.Add([]byte(`{"op":"begin","call":{"kind":"go_to","args":{"z":3,"x":1.0},"budget":40,"meta":{"turn":1}}}`))
	f.Add([]byte(`{"op":"life","id":7}`))
	f.Add([]byte(`{"id":"a1","op":"step","state":{"step":`))
	f.Fuzz(func(t *testing.T, line []byte) {
		q, err := ParseRequest(line)
		if q.ID != nil && !json.Valid(q.ID) {
			t.Fatalf("recovered id %q is not JSON", q.ID)
		}
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if !json.Valid(line) {
			t.Fatalf("accepted a line that is not JSON: %q", line)
		}
		if !slices.Contains(Ops, q.Op) {
			t.Fatalf("unknown op %q accepted", q.Op)
		}
		switch q.Op {
		case "initial", "step":
			if q.State == nil || q.State.Step == nil {
				t.Fatalf("%s accepted without a state step", q.Op)
			}
			q.State.Merge(nil)
		case "begin", "call":
			if q.Call == nil || (q.Call.Kind == "") == (len(q.Call.Raw) == 0) {
				t.Fatalf("%s accepted without one of kind and raw", q.Op)
			}
		case "note":
			if q.Text == "" {
				t.Fatal("empty note accepted")
			}
		}
		for _, c := range q.Cells {
			if !slices.Contains(CellKinds, c.Kind) {
				t.Fatalf("cell kind %q accepted", c.Kind)
			}
		}
		if q.Done != nil && *q.Done < 0 || q.Item != nil && *q.Item < 0 {
			t.Fatal("negative done or item accepted")
		}
		if len(q.Text) > MaxTextBytes || len(q.Error) > MaxTextBytes || len(q.Outcome) > MaxStringBytes || len(q.Events) > MaxListItems || len(q.Cells) > MaxListItems || len(q.FramePath) > MaxPathBytes {
			t.Fatal("a field past its limit accepted")
		}
	})
}
