package play

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
)

func TestTurnOfRead(t *testing.T) {
	run := RunRecord{Turns: []TurnRecord{{ID: "t0001"}, {ID: "t0002"}, {ID: "t0003"}}}
	for _, c := range []struct{ label, want string }{
		{"before t0001", "t0001"},
		{"before t0003", "t0003"},
		{"t0001", "t0002"}, // read during t0001: for the plan after it
		{"t0002", "t0003"},
		{"t0003", ""},        // during the last turn: no turn followed (yet)
		{"before t0004", ""}, // that turn has not happened
		{"after t0003", ""},
		{"after t0000", ""},
		{"t0000", ""},
		{"t1", ""}, // not a turn id
		{"before", ""},
		{"", ""},
		{"x0001", ""},
	} {
		if got := TurnOfRead(run, c.label); got != c.want {
			t.Errorf("TurnOfRead(%q) = %q, want %q", c.label, got, c.want)
		}
	}
}

// labelWorld notes the session's TurnLabel while each atom runs.
type labelWorld struct {
	World
	sess   **Session
	during []string
}

func (w *labelWorld) Call(ctx context.Context, atom string, a Args) (Outcome, error) {
	w.during = append(w.during, (*w.sess).TurnLabel())
	return w.World.Call(ctx, atom, a)
}

// TestReadsByTurn: the session's TurnLabel follows the turns (before,
// during, after the end), and run.json's reads_before follows the turn
// labels of the access log's rows rather than their times: rows whose
// times would put them elsewhere (a read logged late) go where their
// label says.
func TestReadsByTurn(t *testing.T) {
	f := newFixture(t, logTask, Options{})
	var sess *Session
	w := &labelWorld{World: f.world, sess: &sess}
	sess, err := NewSession(Options{Task: f.sess.opt.Task, Store: f.store, World: w})
	if err != nil {
		t.Fatal(err)
	}
	logPath := f.store.Path(episodes.MetaDir, AccessLogName)
	old := time.Now().Add(-time.Hour) // every row's time is before the run
	read := func(path, kind string) {
		t.Helper()
		b, _ := json.Marshal(MemoryRead{Time: old.UTC().Format(time.RFC3339Nano), Path: path, Kind: kind, Turn: sess.TurnLabel()})
		fh, err := os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		if _, err := fh.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	act := func(plan string) {
		t.Helper()
		if _, _, err := sess.Act(context.Background(), plan, "test"); err != nil {
			t.Fatal(err)
		}
	}
	if got := sess.TurnLabel(); got != "before t0001" {
		t.Errorf("label at the start %q", got)
	}
	read("/index.jsonl", "index")
	act("wait ticks=1")
	read("/episodes/ep_000001/frames/000001.png", "frame")
	act("wait ticks=1; wait ticks=2")
	read("/q/tag:stuck/results.jsonl", "query")
	if err := sess.Stop(EndInterrupted); err != nil {
		t.Fatal(err)
	}
	if got := sess.TurnLabel(); got != "after t0002" {
		t.Errorf("label after the end %q", got)
	}
	read("/mine/notes.md", "note-write")
	if strings.Join(w.during, " ") != "t0001 t0002 t0002" {
		t.Errorf("labels while atoms ran: %q", w.during)
	}
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
			p = append(p, r.Turn+"|"+r.Path)
		}
		return strings.Join(p, " ")
	}
	for i, want := range []string{"before t0001|/index.jsonl", "before t0002|/episodes/ep_000001/frames/000001.png"} {
		if got := paths(run.Turns[i].ReadsBefore); got != want {
			t.Errorf("turn %d reads_before %q, want %q", i+1, got, want)
		}
	}
	if got, want := paths(run.ReadsAfter), "before t0003|/q/tag:stuck/results.jsonl after t0002|/mine/notes.md"; got != want {
		t.Errorf("reads_after %q, want %q", got, want)
	}
}

// FuzzTurnOfRead: any label names no turn or one of the run's turns;
// "before tN" names tN and a label "tN" the turn after it, when they exist.
func FuzzTurnOfRead(f *testing.F) {
	run := RunRecord{Turns: []TurnRecord{{ID: "t0001"}, {ID: "t0002"}, {ID: "t0003"}}}
	f.Fuzz(func(t *testing.T, label string) {
		got := TurnOfRead(run, label)
		if got == "" {
			return
		}
		found := false
		for _, tr := range run.Turns {
			found = found || tr.ID == got
		}
		if !found {
			t.Fatalf("TurnOfRead(%q) = %q, not a turn of the run", label, got)
		}
		if id, ok := strings.CutPrefix(label, "before "); ok && got != id {
			t.Fatalf("TurnOfRead(%q) = %q, want %q", label, got, id)
		}
	})
}
