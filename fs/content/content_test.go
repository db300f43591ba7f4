package content

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
)

// newStore makes an empty store in a temporary directory.
func newStore(t *testing.T) *episodes.Store {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, episodes.EpisodesDir), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := episodes.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// indexRow is an index.jsonl row of episode n with tags.
func indexRow(n int, tags ...string) string {
	id := fmt.Sprintf("ep_%06d", n)
	b, _ := json.Marshal(map[string]any{"id": id, "path": "episodes/" + id, "image": "episodes/" + id + "/observation/image.png",
		"last_step": n * 10, "summary": "episode " + id, "tags": tags, "x": float64(n), "y": 64.0, "z": -float64(n)})
	return string(b) + "\n"
}

func appendFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// TestStatsCache: the counts follow files as they grow, ignore a partial
// last line, start over when a file is replaced, and count earlier lives.
func TestStatsCache(t *testing.T) {
	s := newStore(t)
	c := NewStatsCache(s)
	st, err := c.Get()
	if err != nil || st.Episodes != 0 || st.Last != nil || st.Lives != 1 {
		t.Fatalf("empty store: %+v, %v", st, err)
	}
	idx := s.Path(episodes.IndexFileName)
	appendFile(t, idx, indexRow(1, "stuck")+indexRow(2, "tree"))
	appendFile(t, s.Path(episodes.GridFileName), `{"cell": [1, 2, 3], "kind": "walked", "step": 1}`+"\n"+`{"cell": [1,2,3], "kind": "placed", "step": 2}`+"\n"+`{"cell": [4, 5, 6], "kind": "walked", "step": 3}`+"\n")
	appendFile(t, s.Path(episodes.LogFileName), "[STATE] a\n[EVENT] b\n[NOTE] partial")
	frame := s.Path("episodes/ep_000002/observation/image.png")
	appendFile(t, frame, "png")
	st, err = c.Get()
	if err != nil {
		t.Fatal(err)
	}
	if st.Episodes != 2 || st.First.ID != "ep_000001" || st.Last.ID != "ep_000002" || len(st.Recent) != 2 {
		t.Errorf("index counts: episodes %d, first %v, last %v, recent %d", st.Episodes, st.First, st.Last, len(st.Recent))
	}
	if st.GridRows != 3 || st.GridCells != 2 || st.GridKinds["walked"] != 2 || st.GridKinds["placed"] != 1 {
		t.Errorf("grid counts: rows %d, cells %d, kinds %v", st.GridRows, st.GridCells, st.GridKinds)
	}
	if st.LogLines != 2 {
		t.Errorf("log lines = %d, want 2 (the partial last line is not counted)", st.LogLines)
	}
	if st.FrameExample != "episodes/ep_000002/observation/image.png" {
		t.Errorf("frame example = %q", st.FrameExample)
	}

	// Growth: only the appended lines are new.
	appendFile(t, idx, indexRow(3))
	appendFile(t, s.Path(episodes.LogFileName), " line\n")
	if st, err = c.Get(); err != nil || st.Episodes != 3 || st.Last.ID != "ep_000003" || st.LogLines != 3 {
		t.Errorf("after growth: episodes %d, last %v, log lines %d, %v", st.Episodes, st.Last, st.LogLines, err)
	}

	// A new life: the files are replaced and an earlier life appears.
	life := s.Path(episodes.PreviousDir, episodes.LifeName(1))
	if err := os.MkdirAll(life, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(idx, filepath.Join(life, episodes.IndexFileName)); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(s.Path(episodes.GridFileName), filepath.Join(life, episodes.GridFileName)); err != nil {
		t.Fatal(err)
	}
	appendFile(t, idx, indexRow(1))
	appendFile(t, s.Path(episodes.GridFileName), `{"cell": [9, 9, 9], "kind": "hazard", "step": 1}`+"\n")
	c.Invalidate()
	if st, err = c.Get(); err != nil {
		t.Fatal(err)
	}
	if st.Episodes != 1 || st.Lives != 2 || len(st.Previous) != 1 || st.Previous[0] != (LifeStats{N: 1, Episodes: 3}) {
		t.Errorf("after a new life: episodes %d, lives %d, previous %+v", st.Episodes, st.Lives, st.Previous)
	}
	if st.GridRows != 1 || st.GridCells != 1 || len(st.GridKinds) != 1 || st.GridKinds["hazard"] != 1 {
		t.Errorf("after a new life: grid rows %d, cells %d, kinds %v", st.GridRows, st.GridCells, st.GridKinds)
	}
}

// TestNow: /now/ shows the harness's now/state.json when written, else
// the last episode's state; the last episode's frame; nothing on an empty
// store or for another name (the rule itself is episodes.FindLatestState's).
func TestNow(t *testing.T) {
	s := newStore(t)
	if err := NowExists(s, "state.json"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("empty store: %v, want ErrNotExist", err)
	}
	appendFile(t, s.Path(episodes.IndexFileName), indexRow(1)+indexRow(2))
	appendFile(t, s.Path("episodes/ep_000002/state/state.json"), `{"step": 7}`)
	appendFile(t, s.Path("episodes/ep_000002/observation/image.png"), "png")
	if got, err := NowFramePath(s); err != nil || got != s.Path("episodes/ep_000002/observation/image.png") {
		t.Errorf("NowFramePath = %q, %v; want the last episode's frame", got, err)
	}
	if got, err := NowState(s); err != nil || !strings.Contains(string(got), `"step"`) || !strings.Contains(string(got), "7") {
		t.Errorf("NowState = %s, %v; want the last episode's state (step 7)", got, err)
	}
	appendFile(t, s.Path(episodes.NowDir, "state.json"), `{"step": 9}`)
	if got, err := NowState(s); err != nil || !strings.Contains(string(got), "9") {
		t.Errorf("NowState = %s, %v; want now/state.json (step 9)", got, err)
	}
	for _, name := range NowNames() {
		if err := NowExists(s, name); err != nil {
			t.Errorf("NowExists(%s): %v", name, err)
		}
	}
	if err := NowExists(s, "other"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("NowExists(other): %v, want ErrNotExist", err)
	}
	if got := NowNames(); strings.Join(got, ",") != "state.json,frame.png" {
		t.Errorf("NowNames() = %v", got)
	}
}

// TestReadme: the sections follow the options and the statistics.
func TestReadme(t *testing.T) {
	last := &episodes.Row{ID: "ep_000042", LastStep: 420, Summary: "found\n  a tree", Tags: []string{"tree"}, X: 3, Z: -7}
	st := Stats{Episodes: 42, First: &episodes.Row{ID: "ep_000001"}, Last: last, Recent: []episodes.Row{*last}, Lives: 2,
		Previous: []LifeStats{{N: 1, Episodes: 17}}, GridRows: 4, GridCells: 3, GridKinds: map[string]int{"walked": 4}, LogLines: 9}
	for _, c := range []struct {
		name     string
		o        ReadmeOptions
		want     []string
		wantNone []string
	}{
		{"plain", ReadmeOptions{}, []string{"cd /mfm\n", "42 episodes in this life (`ep_000001` … `ep_000042`), up to step 420", "found a tree", "life_1: 17 episodes", "walked 4", "cat episodes/ep_000042/outcome.json", "**read and write**"},
			[]string{"q/<query>/", "View grammar", "## Provenance"}},
		{"full", ReadmeOptions{Mountpoint: "/m", ReadOnlyMine: true, Queries: true, Views: true, QueryHelp: "QGRAMMAR", ViewHelp: "VGRAMMAR", Provenance: "## Provenance\n\nseeded\n"},
			[]string{"cd /m\n", "cat '/m/q/tag:tree last:5/count'", "near:3,-7 r:8", "QGRAMMAR", "VGRAMMAR", "last 64 matches' frames", "## Provenance\n\nseeded\n\n## What is here", "**read only in this run**", "Everything is read-only in this run"},
			[]string{"**read and write**"}},
	} {
		got := string(Readme(st, c.o))
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: README lacks %q:\n%s", c.name, w, got)
			}
		}
		for _, w := range c.wantNone {
			if strings.Contains(got, w) {
				t.Errorf("%s: README has %q", c.name, w)
			}
		}
	}
	if got := string(Readme(Stats{Lives: 1}, ReadmeOptions{})); !strings.Contains(got, "No episodes recorded yet") || !strings.Contains(got, "(none recorded in this store yet)") {
		t.Errorf("README of an empty store:\n%s", got)
	}
	if got := ProvenanceFailure(errors.New("bad\n  json")); got != "## Provenance\n\nThe store's provenance could not be read: bad json\n" {
		t.Errorf("ProvenanceFailure = %q", got)
	}
}

// TestErrorLog: newest first, at most max entries, errno names, then help.
func TestErrorLog(t *testing.T) {
	l := NewErrorLog(2)
	if got := string(l.Render(nil)); !strings.Contains(got, "(no errors since the mount started)") {
		t.Errorf("empty log:\n%s", got)
	}
	l.Add("/q/a", Invalid(errors.New("first")))
	l.Add("/q/b", fmt.Errorf("slow: %w", context.DeadlineExceeded))
	l.Add("/q/c", Invalid(errors.New("third\nsecond line")))
	got := string(l.Render([]string{"HELP1", "HELP2\n"}))
	ib, ic := strings.Index(got, "/q/b  [ETIMEDOUT]"), strings.Index(got, "/q/c  [EINVAL]\n  third\n  second line")
	if strings.Contains(got, "/q/a") || ib < 0 || ic < 0 || ic > ib || !strings.HasSuffix(got, "\nHELP1\n\nHELP2\n") {
		t.Errorf("error log:\n%s", got)
	}
}

// TestAccessLog: records reach the file with their pid, repeats within a
// second are folded, Close flushes, and a log that is off writes nothing.
func TestAccessLog(t *testing.T) {
	s := newStore(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a := NewAccessLog(s, log, false)
	a.Add("/episodes/ep_000001/action.json", "episode", 7)
	a.Add("/episodes/ep_000001/action.json", "episode", 7) // folded
	a.Add("/q/tag:x", "query", 0)
	a.Close()
	a.Add("/late", "episode", 1) // ignored
	b, err := os.ReadFile(s.Path(".mfm", AccessFileName))
	if err != nil {
		t.Fatal(err)
	}
	var got []AccessRecord
	for _, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		var r AccessRecord
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if _, err := time.Parse(time.RFC3339Nano, r.Time); err != nil {
			t.Errorf("time %q: %v", r.Time, err)
		}
		got = append(got, r)
	}
	if len(got) != 2 || got[0].Path != "/episodes/ep_000001/action.json" || got[0].Pid != 7 || got[1].Kind != "query" || got[1].Pid != 0 {
		t.Errorf("records: %+v", got)
	}

	s2 := newStore(t)
	off := NewAccessLog(s2, log, true)
	if off.On() {
		t.Error("a log that is off says it is on")
	}
	off.Add("/x", "episode", 1)
	off.Close()
	if _, err := os.Stat(s2.Path(".mfm", AccessFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a log that is off wrote %s: %v", AccessFileName, err)
	}
	var nilLog *AccessLog
	nilLog.Add("/x", "episode", 1)
	nilLog.Close()
}

func TestKindOfPath(t *testing.T) {
	for _, c := range []struct{ p, def, want string }{
		{"/episodes/ep_000001/observation/image.png", "episode", "frame"},
		{"/episodes/ep_000001/frames/0001.jpg", "episode", "frame"},
		{"/episodes/ep_000001/action.json", "episode", "episode"},
		{"/mine/sketch.png", "note", "note"},
	} {
		if got := KindOfPath(c.p, c.def); got != c.want {
			t.Errorf("KindOfPath(%q, %q) = %q, want %q", c.p, c.def, got, c.want)
		}
	}
}

// TestQueryCache: a result is shared while index.jsonl is unchanged, run
// again once it grows; a malformed query is Invalid; a Querier that
// ignores its deadline does not hang Get; a timeout is not cached.
func TestQueryCache(t *testing.T) {
	s := newStore(t)
	idx := s.Path(episodes.IndexFileName)
	appendFile(t, idx, indexRow(1))
	var runs atomic.Int32
	block := make(chan struct{})
	defer close(block)
	run := func(ctx context.Context, q string) ([][]byte, []string, error) {
		runs.Add(1)
		switch q {
		case "bad":
			return nil, nil, errors.New("unknown term bad")
		case "stuck":
			<-block // ignores ctx
			return nil, nil, nil
		case "mismatch":
			return [][]byte{[]byte("x")}, nil, nil
		}
		rows, err := episodes.TailRows(idx, 0, 100)
		var out [][]byte
		var dirs []string
		for _, r := range rows {
			out = append(out, r.Raw)
			dirs = append(dirs, r.Path)
		}
		return out, dirs, err
	}
	c := NewQueryCache(idx, 200*time.Millisecond, run)
	ctx := context.Background()
	r, err := c.Get(ctx, "all")
	if err != nil || string(r.Count()) != "1\n" {
		t.Fatalf("Get(all) = %v, %v", r, err)
	}
	if _, err := c.Get(ctx, "all"); err != nil || runs.Load() != 1 {
		t.Errorf("second Get(all): %v, %d runs, want 1 (cached)", err, runs.Load())
	}
	appendFile(t, idx, indexRow(2))
	if r, err = c.Get(ctx, "all"); err != nil || string(r.Count()) != "2\n" || runs.Load() != 2 {
		t.Errorf("Get(all) after the index grew: %v, %d runs, want a fresh run", err, runs.Load())
	}
	if _, err := c.Get(ctx, "bad"); Errno(err) != 22 || !strings.Contains(err.Error(), "unknown term bad") {
		t.Errorf("Get(bad) = %v (errno %d), want EINVAL with the message", err, Errno(err))
	}
	if _, err := c.Get(ctx, "mismatch"); err == nil || !strings.Contains(err.Error(), "1 rows but 0 directories") {
		t.Errorf("Get(mismatch) = %v", err)
	}
	start := time.Now()
	if _, err := c.Get(ctx, "stuck"); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Errorf("Get(stuck) = %v after %v, want a timeout after about 300ms", err, time.Since(start))
	}
	n := runs.Load()
	if _, err := c.Get(ctx, "stuck"); !errors.Is(err, context.DeadlineExceeded) || runs.Load() != n+1 {
		t.Errorf("Get(stuck) again: %v, runs %d -> %d; a timeout must not be cached", err, n, runs.Load())
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Get(cctx, "stuck"); !errors.Is(err, context.Canceled) {
		t.Errorf("Get(stuck) with a cancelled request = %v, want Canceled", err)
	}
}

// TestQueryResult: entry names, links (duplicates get one), results and
// sheet inputs (the last SheetMaxTiles), and a sheet rendered once.
func TestQueryResult(t *testing.T) {
	var rows [][]byte
	var dirs []string
	for i := 1; i <= SheetMaxTiles+2; i++ {
		rows = append(rows, []byte(strings.TrimSuffix(indexRow(i), "\n")))
		dirs = append(dirs, fmt.Sprintf("episodes/ep_%06d", i))
	}
	rows = append(rows, []byte(indexRow(1)))
	dirs = append(dirs, "episodes/ep_000001") // a duplicate
	rows = append(rows, []byte(indexRow(4)))
	dirs = append(dirs, "previous/life_1/episodes/ep_000004")
	r := newQueryResult(rows, dirs)
	links := r.Links()
	if len(links) != SheetMaxTiles+3 || links[0] != "ep_000001" || links[len(links)-1] != "life_1.ep_000004" {
		t.Errorf("links: %d, %v … %v", len(links), links[0], links[len(links)-1])
	}
	if tgt, ok := r.Link("life_1.ep_000004"); !ok || tgt != "../../previous/life_1/episodes/ep_000004" {
		t.Errorf("Link(life_1.ep_000004) = %q, %v", tgt, ok)
	}
	if _, ok := r.Link("ep_999999"); ok {
		t.Error("Link of a name not in the result")
	}
	if got := bytes.Count(r.Results(), []byte("\n")); got != len(rows) {
		t.Errorf("results.jsonl has %d lines, want %d", got, len(rows))
	}
	frames, labels := r.sheetInputs()
	if len(frames) != SheetMaxTiles || labels[len(labels)-2] != "ep_000001" || frames[len(frames)-1] != "previous/life_1/episodes/ep_000004/observation/image.png" {
		t.Errorf("sheet inputs: %d frames, last labels %v, last frame %s", len(frames), labels[len(labels)-2:], frames[len(frames)-1])
	}
	var renders atomic.Int32
	render := func(ctx context.Context, f, l []string) ([]byte, error) {
		renders.Add(1)
		if _, ok := ctx.Deadline(); !ok {
			return nil, errors.New("no deadline")
		}
		return []byte("PNG"), nil
	}
	for i := 0; i < 2; i++ {
		if b, err := r.Sheet(context.Background(), time.Second, render); err != nil || string(b) != "PNG" {
			t.Fatalf("Sheet: %q, %v", b, err)
		}
	}
	if renders.Load() != 1 {
		t.Errorf("sheet rendered %d times, want once", renders.Load())
	}
}
