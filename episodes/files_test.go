package episodes

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDecodeFixtureFiles decodes every episode file of the paper's runs:
// the paper's layout must keep reading.
func TestDecodeFixtureFiles(t *testing.T) {
	for _, fx := range fixtures {
		s, err := Open(fx)
		if err != nil {
			t.Fatal(err)
		}
		l, err := s.CurrentLife()
		if err != nil {
			t.Fatal(err)
		}
		rows, err := l.AllRows()
		if err != nil || len(rows) == 0 {
			t.Fatalf("%s: %d rows, %v", fx, len(rows), err)
		}
		for _, r := range rows {
			dir := l.RowDir(&r)
			if _, err := os.Stat(dir); err != nil {
				continue // the diamond run's export lacks its last episodes
			}
			st, err := ReadState(dir)
			if err != nil {
				t.Fatal(err)
			}
			if st.Step == nil || st.Pos == nil || st.Pos.X != r.X || st.Pos.Z != r.Z {
				t.Fatalf("%s %s: state step %v pos %+v, row at %v,%v", fx, r.ID, st.Step, st.Pos, r.X, r.Z)
			}
			o, err := ReadOutcome(dir)
			if err != nil {
				t.Fatal(err)
			}
			if o.LastStep == nil || *o.LastStep != r.LastStep || o.EndState != nil {
				t.Fatalf("%s %s: outcome last_step %v end_state %v, row last_step %d", fx, r.ID, o.LastStep, o.EndState, r.LastStep)
			}
			a, err := ReadAction(dir)
			if r.Kind == "initial" {
				if !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("%s %s: initial episode's action: %v", fx, r.ID, err)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.FirstStep == nil || *a.FirstStep != r.FirstStep || (a.Entry.Procedure == "") == (a.Entry.Action == nil) {
				t.Fatalf("%s %s: action first_step %v entry %+v", fx, r.ID, a.FirstStep, a.Entry)
			}
		}
	}
}

// TestDecodePaperEpisode checks the fields of one paper episode.
func TestDecodePaperEpisode(t *testing.T) {
	dir := "../testdata/paper-run/store/episodes/ep_000002"
	st, err := ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if *st.Step != 400 || st.Pos.X != 3182.699999988079 || *st.Pos.Yaw != -184.84799 || st.Inventory["dirt"] != 7 ||
		*st.Vitals.Health != 20 || *st.GUIOpen || st.Goals.Next != "water_1" || *st.Mainhand != "bucket" {
		t.Fatalf("state: %+v", st)
	}
	fields, err := st.Fields()
	if err != nil || fields["verified"] != "0/3" || fields["hotbar"] == nil {
		t.Fatalf("state fields: %v, %v", fields, err)
	}
	o, err := ReadOutcome(dir)
	if err != nil {
		t.Fatal(err)
	}
	if *o.LastStep != 576 || *o.Moved != 0 || o.InventoryDelta["dirt"] != 1 || o.MilestoneTransition != nil ||
		len(o.Notes) != 2 || strings.Join(o.Tags, ",") != "inventory_changed,broke,note" || o.Events[0] != "pickup dirt +1" {
		t.Fatalf("outcome: %+v", o)
	}
	a, err := ReadAction(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a.Entry.Procedure != "fetch_water" || a.Entry.Args["n"] != 400.0 || *a.Entry.Steps != 400 || a.Call != "" || a.Procedure != nil {
		t.Fatalf("action: %+v", a)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, ActionFileName))
	if !bytes.Equal(a.Raw, bytes.TrimSpace(raw)) {
		t.Fatal("action Raw is not the file")
	}
}

// TestDecodeErrors: bad input gets an error naming the field and what it
// must be.
func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		decode func([]byte) error
		in     string
		want   string
	}{
		{func(b []byte) error { _, err := DecodeOutcome(b); return err }, `[1]`, "outcome: not a JSON object"},
		{func(b []byte) error { _, err := DecodeOutcome(b); return err }, `{"moved": "far"}`, `outcome: field "moved" is a JSON string, want a number`},
		{func(b []byte) error { _, err := DecodeOutcome(b); return err }, `{"end_state": {"pos": {"x": "1"}}}`, `field "end_state.pos.x" is a JSON string, want a number`},
		{func(b []byte) error { _, err := DecodeOutcome(b); return err }, `{"notes": "a"}`, `field "notes" is a JSON string, want a list`},
		{func(b []byte) error { _, err := DecodeState(b); return err }, `{"step": 1.5}`, `state: field "step" is a JSON number 1.5, want an integer`},
		{func(b []byte) error { _, err := DecodeState(b); return err }, `{"inventory": [1]}`, `state: field "inventory" is a JSON array, want an object`},
		{func(b []byte) error { _, err := DecodeAction(b); return err }, `{"entry": `, "action: unexpected end of JSON input"},
		{func(b []byte) error { _, err := DecodeStep(b); return err }, `{"state": 3}`, `step: field "state" is a JSON number, want an object`},
	}
	for _, c := range cases {
		err := c.decode([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.in, err, c.want)
		}
	}
	if _, err := ReadOutcome(t.TempDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing outcome.json: %v, want fs.ErrNotExist", err)
	}
}

func TestScanSteps(t *testing.T) {
	dir := t.TempDir()
	data := `{"action": {"forward": 1}, "events": ["hurt lava"], "frame": "frames/000001.png", "state": {"step": 1, "pos": {"x": 1.5, "y": 2, "z": 3}}, "step": 1}
not json

{"action": null, "events": [], "state": {"step": 2}, "step": 2}
{"step": 3, "state"`
	if err := os.WriteFile(filepath.Join(dir, StepsFileName), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	var steps []Step
	var bad []int
	if err := ScanSteps(dir, func(s Step) error { steps = append(steps, s); return nil }, func(e *RowError) { bad = append(bad, e.Line) }); err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 || steps[0].Frame != "frames/000001.png" || steps[0].State.Pos.X != 1.5 || steps[0].Events[0] != "hurt lava" ||
		string(steps[0].Action) != `{"forward": 1}` || steps[1].Step != 2 || len(bad) != 1 || bad[0] != 2 {
		t.Fatalf("steps %+v, bad lines %v", steps, bad)
	}
	n := 0
	if err := ScanSteps(t.TempDir(), func(Step) error { n++; return nil }, nil); err != nil || n != 0 {
		t.Fatalf("no steps.jsonl: %d rows, %v", n, err)
	}
}

// FuzzDecodeEpisodeFiles decodes any input as each episode file: no
// panic, and what decodes is a JSON object kept whole in Raw.
func FuzzDecodeEpisodeFiles(f *testing.F) {
	for _, name := range []string{"state/state.json", "outcome.json", "action.json"} {
		b, err := os.ReadFile("../testdata/paper-run/store/episodes/ep_000002/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"end_state": {"pos": {"x": 1, "yaw": null}}, "milestone_transition": ["a"]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		trimmed := bytes.Trim(b, " \t\r\n") // JSON's white space
		check := func(what string, raw json.RawMessage, err error) {
			if err != nil {
				return
			}
			if !json.Valid(b) || !bytes.Equal(raw, trimmed) {
				t.Fatalf("%s decoded %q but Raw is %q", what, b, raw)
			}
		}
		if s, err := DecodeState(b); err == nil {
			check("state", s.Raw, nil)
		}
		if o, err := DecodeOutcome(b); err == nil {
			check("outcome", o.Raw, nil)
		}
		if a, err := DecodeAction(b); err == nil {
			check("action", a.Raw, nil)
		}
		_, _ = DecodeStep(b)
	})
}
