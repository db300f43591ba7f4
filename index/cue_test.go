package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/index/query"
)

// quiet keeps the expected warnings (the malformed rows) out of test logs.
var quiet = Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}

var (
	genTags    = []string{"stuck", "broke", "damage", "milestone", "note", "inventory_changed", "initial"}
	genActions = []string{"go_to", "mine_ahead", "look", "collect_drops", "place_at", "chop_tree", "dig_down"}
	genEvents  = []string{"hurt fall 10", "hurt lava 4", "pickup dirt +1", "fall damage 3", "Blocked by stone"}
	genWords   = []string{"tree", "cave", "river", "shaft", "surface", "log", "stone", "water", "bucket", "sand", "Ünïcode", "dug", "blocked", "fell"}
)

// genRow is a random but plausible index row; step is its first step.
func genRow(rng *rand.Rand, id int, step int64, t time.Time) string {
	act := genActions[rng.IntN(len(genActions))]
	var tags []string
	for _, tg := range genTags {
		if rng.IntN(4) == 0 {
			tags = append(tags, fmt.Sprintf("%q", tg))
		}
	}
	var words []string
	for i := 0; i < 1+rng.IntN(5); i++ {
		words = append(words, genWords[rng.IntN(len(genWords))])
	}
	var events []string
	for rng.IntN(3) == 0 {
		events = append(events, fmt.Sprintf("%q", genEvents[rng.IntN(len(genEvents))]))
	}
	x := float64(rng.IntN(4000)-2000)/10 + 0.5
	y := float64(rng.IntN(1000)-200) / 10
	z := float64(rng.IntN(4000)-2000) / 10
	return fmt.Sprintf(`{"id": "ep_%06d", "path": "episodes/ep_%06d", "image": "episodes/ep_%06d/observation/image.png", "first_step": %d, "last_step": %d, "action_kind": %q, "summary": %q, "tags": [%s], "events": [%s], "x": %v, "y": %v, "z": %v, "time": %q}`,
		id, id, id, step, step+int64(rng.IntN(30)), act, act+": "+strings.Join(words, " "), strings.Join(tags, ", "), strings.Join(events, ", "), x, y, z, t.UTC().Format(time.RFC3339Nano))
}

// genStore writes a store with an earlier life and a current one, rows
// per life, a malformed line and a torn tail in the current life.
func genStore(t testing.TB, rows int) *episodes.Store {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	write := func(rel string, n, base int) {
		var b strings.Builder
		step := int64(0)
		for i := 0; i < n; i++ {
			b.WriteString(genRow(rng, i, step, t0.Add(time.Duration(base+i)*1500*time.Millisecond)))
			b.WriteByte('\n')
			if i == n/2 {
				b.WriteString(`{"id": "ep_bad", this line is malformed` + "\n")
			}
			step += int64(rng.IntN(40))
		}
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("previous/life_1/index.jsonl", rows/3, 0)
	write("index.jsonl", rows-rows/3, rows)
	f, err := os.OpenFile(filepath.Join(dir, "index.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"id": "ep_torn", "summary": "half writ`) // a torn tail: not a row yet
	f.Close()
	s, err := episodes.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// equivQueries are queries whose cue-index answer must equal Scan's.
var equivQueries = []string{
	"last:1", "last:20", "last:100000",
	"tag:stuck", "tag:stuck tag:broke", "-tag:stuck", "tag:damage -tag:note last:7",
	"action:go_to", "action:go_to action:look", "action:nothing",
	"steps:0..0", "steps:100..400", "steps:5000..5001", "steps:0..100000000",
	"near:0,0", "near:10,-20 r:30", "near:-100.5,50 r:0", "near:0,20,0 r:40", "near:0,0 r:100000",
	"y:<0", "y:>50", "y:-5..10", "y:10..10", "y:<-19.9",
	"tree", "TREE cave", `"dug cave"`, "unicode", "ünïcode", "mine_ahead", "mine", "log stone", "nosuchword",
	"life:1", "life:1 tag:stuck", "life:all tag:milestone last:10", "life:all", "life:3",
	"since:2026-12-01T10:05:00Z", "until:2026-12-01T10:01:00Z", "since:2026-12-01 until:2026-12-01", "since:2026-12-02",
	"tag:stuck near:50,50 r:60 y:>0 last:3 life:all",
	"action:mine_ahead steps:100..2000 tree -tag:broke",
	"hurt", `"fall damage"`, `"hurt fall"`, "event:hurt", "event:fall_damage", "event:hurt_fall last:3",
	"event:lava tag:stuck", "event:pickup event:dirt", "event:blocked", "blocked -tag:note", "event:nosuchword",
}

func hitKeys(h []Hit) []string {
	out := make([]string, len(h))
	for i, x := range h {
		out[i] = fmt.Sprintf("%d %s %s", x.Life, x.Dir, x.Row)
	}
	return out
}

func TestCueEqualsScan(t *testing.T) {
	t.Run("1MiB blocks", testCueEqualsScan)
	t.Run("1KiB blocks", func(t *testing.T) { // last:N searches many windows
		defer func(s int) { blockShift = s }(blockShift)
		blockShift = 10
		testCueEqualsScan(t)
	})
}

func testCueEqualsScan(t *testing.T) {
	s := genStore(t, 3000)
	x, st, err := Open(context.Background(), s, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if !st.Rebuilt || st.Reason != "missing" || st.Indexed != 3000 || st.Lives != 2 {
		t.Fatalf("first open: %+v, want a build of 3000 rows in 2 lives", st)
	}
	scan := Scan{Store: s}
	qs := append([]string(nil), equivQueries...)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 200; i++ { // random combinations of terms
		var terms []string
		if rng.IntN(2) == 0 {
			terms = append(terms, "tag:"+genTags[rng.IntN(len(genTags))])
		}
		if rng.IntN(3) == 0 {
			terms = append(terms, "-tag:"+genTags[rng.IntN(len(genTags))])
		}
		if rng.IntN(3) == 0 {
			terms = append(terms, "action:"+genActions[rng.IntN(len(genActions))])
		}
		if rng.IntN(3) == 0 {
			a := rng.IntN(3000)
			terms = append(terms, fmt.Sprintf("steps:%d..%d", a, a+rng.IntN(500)))
		}
		if rng.IntN(3) == 0 {
			terms = append(terms, fmt.Sprintf("near:%d,%d r:%d", rng.IntN(400)-200, rng.IntN(400)-200, rng.IntN(80)))
		}
		if rng.IntN(4) == 0 {
			terms = append(terms, fmt.Sprintf("y:<%d", rng.IntN(100)-20))
		}
		if rng.IntN(2) == 0 {
			terms = append(terms, genWords[rng.IntN(len(genWords))])
		}
		if rng.IntN(4) == 0 {
			terms = append(terms, "event:"+query.Tokens(genEvents[rng.IntN(len(genEvents))])[rng.IntN(2)])
		}
		if rng.IntN(3) == 0 {
			terms = append(terms, fmt.Sprintf("last:%d", 1+rng.IntN(50)))
		}
		if rng.IntN(4) == 0 {
			terms = append(terms, "life:all")
		}
		if len(terms) == 0 {
			terms = append(terms, "last:5")
		}
		qs = append(qs, strings.Join(terms, " "))
	}
	nonEmpty := 0
	for _, qs := range qs {
		q, err := query.Parse(qs)
		if err != nil {
			t.Fatalf("%s: %v", qs, err)
		}
		want, err := scan.Search(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := x.Search(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", qs, err)
		}
		if !reflect.DeepEqual(hitKeys(got), hitKeys(want)) {
			t.Errorf("%s: index gives %d hits, scan %d", qs, len(got), len(want))
		}
		if len(want) > 0 {
			nonEmpty++
		}
	}
	if nonEmpty < len(qs)/2 {
		t.Errorf("only %d of %d queries have results: the comparison proves little", nonEmpty, len(qs))
	}
}

// TestCueTail: rows appended after Open are found by the next Search,
// and a reopen indexes only what is new.
func TestCueTail(t *testing.T) {
	s := genStore(t, 300)
	var logs bytes.Buffer
	x, _, err := Open(context.Background(), s, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), "skipping a malformed row"); n != 2 || !strings.Contains(logs.String(), "previous/life_1/index.jsonl") {
		t.Errorf("want one warning per malformed row (2), naming the file; got:\n%s", logs.String())
	}
	q, _ := query.Parse("needle last:5")
	if h, _ := x.Search(context.Background(), q); len(h) != 0 {
		t.Fatalf("needle before append: %v", hitKeys(h))
	}
	// Completing the torn tail makes it a row; then one more.
	appendLine(t, s, `ed needle"}`+"\n")
	appendLine(t, s, `{"id": "ep_new", "summary": "another needle", "tags": ["x"], "first_step": 9000, "last_step": 9001}`+"\n")
	h, err := x.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(ids(h)); got != "[2:ep_torn 2:ep_new]" {
		t.Errorf("after append: %s", got)
	}
	x.Close()
	appendLine(t, s, `{"id": "ep_newer", "summary": "a third needle", "first_step": 9001, "last_step": 9002}`+"\n")
	x, st, err := Open(context.Background(), s, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if st.Rebuilt || st.Indexed != 1 {
		t.Errorf("reopen: %+v, want 1 row tailed and no rebuild", st)
	}
	h, _ = x.Search(context.Background(), q)
	if got := fmt.Sprint(ids(h)); got != "[2:ep_torn 2:ep_new 2:ep_newer]" {
		t.Errorf("after reopen: %s", got)
	}
}

func appendLine(t *testing.T, s *episodes.Store, line string) {
	t.Helper()
	f, err := os.OpenFile(s.Path("index.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line); err != nil {
		t.Fatal(err)
	}
}

// TestCueRebuild: an index that no longer describes the store, or that
// cannot be read, is moved aside and rebuilt, and still answers as Scan.
func TestCueRebuild(t *testing.T) {
	cases := []struct {
		name   string
		damage func(t *testing.T, s *episodes.Store, idxDir string)
		reason string
	}{
		{"line changed", func(t *testing.T, s *episodes.Store, _ string) {
			b, _ := os.ReadFile(s.Path("index.jsonl"))
			i := strings.LastIndex(string(b[:len(b)-40]), `"tags": [`)
			b[i+1] = 'T' // same length, different bytes, in the last complete line
			os.WriteFile(s.Path("index.jsonl"), b, 0o644)
		}, "life 2: the line at offset"},
		{"truncated", func(t *testing.T, s *episodes.Store, _ string) {
			st, _ := os.Stat(s.Path("index.jsonl"))
			os.Truncate(s.Path("index.jsonl"), st.Size()/2)
		}, "life 2: index.jsonl shorter than the watermark"},
		{"life gone", func(t *testing.T, s *episodes.Store, _ string) {
			os.RemoveAll(s.Path("previous"))
		}, "life 2 is gone"}, // life 2 is now life 1: the numbering moved
		{"corrupt files", func(t *testing.T, s *episodes.Store, dir string) {
			filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
				if err == nil && !info.IsDir() {
					os.WriteFile(p, []byte("garbage"), 0o644)
				}
				return nil
			})
		}, "unreadable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := genStore(t, 300)
			x, _, err := Open(context.Background(), s, quiet)
			if err != nil {
				t.Fatal(err)
			}
			x.Close()
			c.damage(t, s, s.Path(".mfm", "cue"))
			x, st, err := Open(context.Background(), s, quiet)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			if c.reason != "" && (!st.Rebuilt || !strings.Contains(st.Reason, c.reason)) {
				t.Errorf("reopen: %+v, want a rebuild because %q", st, c.reason)
			}
			q, _ := query.Parse("life:all")
			want, _ := Scan{Store: s}.Search(context.Background(), q)
			got, err := x.Search(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(hitKeys(got), hitKeys(want)) || len(want) == 0 {
				t.Errorf("after rebuild: %d hits, scan %d", len(got), len(want))
			}
		})
	}
}

func TestCueSchemaVersion(t *testing.T) {
	s := genStore(t, 50)
	x, _, err := Open(context.Background(), s, quiet)
	if err != nil {
		t.Fatal(err)
	}
	x.idx.SetInternal([]byte("schema"), []byte("mfm-cue-0"))
	x.Close()
	x, st, err := Open(context.Background(), s, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if !st.Rebuilt || !strings.Contains(st.Reason, `schema "mfm-cue-0"`) || st.Indexed != 50 {
		t.Errorf("reopen of an old schema: %+v", st)
	}
}

// TestCueBusy: a second opener (here a second lock fd; another process
// gets the same) is refused with ErrBusy instead of waiting.
func TestCueBusy(t *testing.T) {
	s := genStore(t, 30)
	x, _, err := Open(context.Background(), s, quiet)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := Open(context.Background(), s, quiet); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrBusy) {
			t.Errorf("second open: %v, want ErrBusy", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("second open waits for the first")
	}
	x.Close()
	y, _, err := Open(context.Background(), s, quiet)
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	y.Close()
}

// TestCueWatch: with the watcher running, an appended row is indexed
// without a query asking for it — by file events, and by polling alone.
func TestCueWatch(t *testing.T) {
	for _, notify := range []bool{true, false} {
		t.Run(fmt.Sprintf("notify=%v", notify), func(t *testing.T) {
			s := genStore(t, 100)
			x, _, err := Open(context.Background(), s, quiet)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			poll := time.Hour
			if !notify {
				poll = 20 * time.Millisecond
			}
			before, _ := x.idx.DocCount()
			listening := make(chan struct{})
			go x.watch(ctx, poll, notify, func() { close(listening) })
			<-listening
			start := time.Now()
			appendLine(t, s, `ed"}`+"\n") // completes the torn tail
			for time.Since(start) < 10*time.Second {
				if n, _ := x.idx.DocCount(); n == before+1 {
					t.Logf("indexed %v after the append", time.Since(start))
					return
				}
				time.Sleep(2 * time.Millisecond)
			}
			t.Fatal("the appended row was never indexed")
		})
	}
}

func TestSwitch(t *testing.T) {
	s := testStore(t)
	sw := &searchSwitch{Fallback: Scan{Store: s}}
	q, _ := query.Parse("tag:stuck")
	h, err := sw.Search(context.Background(), q)
	if err != nil || len(h) != 1 {
		t.Fatalf("fallback: %v %v", ids(h), err)
	}
	sw.Set(fixedSearcher{})
	if h, _ := sw.Search(context.Background(), q); len(h) != 0 {
		t.Errorf("after Set: %v", ids(h))
	}
}

type fixedSearcher struct{}

func (fixedSearcher) Search(context.Context, *query.Query) ([]Hit, error) { return nil, nil }

// TestTailScanEqualsScan: the backwards path gives Scan's answer for
// last:N of every size, across lives.
func TestTailScanEqualsScan(t *testing.T) {
	s := genStore(t, 3000)
	lives, _ := s.Lives()
	for _, qs := range []string{"last:1", "last:999", "last:1999", "last:2000", "life:all last:2500", "life:all last:99999", "tag:stuck life:all last:400", "life:1 last:3"} {
		q, _ := query.Parse(qs)
		want, _ := Scan{Store: s}.Search(context.Background(), q)
		var ls []episodes.Life
		for _, l := range lives {
			if q.WantsLife(l.N, lives[len(lives)-1].N) {
				ls = append(ls, l)
			}
		}
		got, done, err := tailScan(context.Background(), s, ls, q, 0)
		if err != nil || !done {
			t.Fatal(err, done)
		}
		if _, done, _ := tailScan(context.Background(), s, ls, q, 10); done && len(want) > 10 {
			t.Errorf("%s: a budget of 10 rows found %d matches", qs, len(want))
		}
		if !reflect.DeepEqual(hitKeys(got), hitKeys(want)) {
			t.Errorf("%s: tail gives %d hits, scan %d", qs, len(got), len(want))
		}
	}
}

// TestCueCancel: a build cancelled midway keeps its whole batches, and
// the next Open goes on from the watermark instead of starting again.
func TestCueCancel(t *testing.T) {
	s := genStore(t, 3000)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := Open(ctx, s, quiet); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled open: %v", err)
	}
	x, st, err := Open(context.Background(), s, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if st.Rebuilt || st.Indexed != 3000-batchRows+1 { // the first batch's 1000 lines held 999 rows and the malformed one
		t.Errorf("after a cancelled build: %+v, want the rest of the rows tailed", st)
	}
	q, _ := query.Parse("life:all")
	want, _ := Scan{Store: s}.Search(context.Background(), q)
	got, _ := x.Search(context.Background(), q)
	if !reflect.DeepEqual(hitKeys(got), hitKeys(want)) {
		t.Errorf("resumed index: %d hits, scan %d", len(got), len(want))
	}
}

// TestCueKill9: a process building the index is killed (SIGKILL) at
// several moments; each time the next Open succeeds — resuming or
// rebuilding — and answers as Scan does.
func TestCueKill9(t *testing.T) {
	if dir := os.Getenv("MFM_CUE_BUILD"); dir != "" {
		t.Skip("helper mode: see TestCueKill9Helper")
	}
	s := genStore(t, 20000)
	q, _ := query.Parse("life:all")
	want, _ := Scan{Store: s}.Search(context.Background(), q)
	for _, delay := range []time.Duration{150 * time.Millisecond, 400 * time.Millisecond, 900 * time.Millisecond, 1500 * time.Millisecond} {
		c := exec.Command(os.Args[0], "-test.run=^TestCueKill9Helper$", "-test.count=1")
		c.Env = append(os.Environ(), "MFM_CUE_BUILD="+s.Root)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		c.Process.Kill()
		c.Wait()
		x, st, err := Open(context.Background(), s, quiet)
		if err != nil {
			t.Fatalf("open after kill -9 at %v: %v", delay, err)
		}
		got, err := x.Search(context.Background(), q)
		x.Close()
		if err != nil || !reflect.DeepEqual(hitKeys(got), hitKeys(want)) {
			t.Fatalf("after kill -9 at %v (%+v): %d hits, scan %d, %v", delay, st, len(got), len(want), err)
		}
		t.Logf("kill -9 at %v: reopened with %d rows to index, rebuilt=%v %s", delay, st.Indexed, st.Rebuilt, st.Reason)
		os.RemoveAll(s.Path(".mfm", "cue")) // the next round builds from scratch again
	}
}

// TestCueKill9Helper builds the index of the store MFM_CUE_BUILD names
// (run by TestCueKill9 as a process to kill).
func TestCueKill9Helper(t *testing.T) {
	dir := os.Getenv("MFM_CUE_BUILD")
	if dir == "" {
		t.Skip("run by TestCueKill9")
	}
	s, err := episodes.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	x, _, err := Open(context.Background(), s, quiet)
	if err != nil {
		t.Fatal(err)
	}
	x.Close()
}

// TestCueFailureFallsBack: when the index fails — closed under it, or
// its disk full while rows arrive — queries are still answered, by a
// scan, and equal the scan's answer; with space again, a reopen works.
func TestCueFailureFallsBack(t *testing.T) {
	q, _ := query.Parse("life:all")
	check := func(t *testing.T, x *Index, s *episodes.Store, when string) {
		t.Helper()
		want, _ := Scan{Store: s}.Search(context.Background(), q)
		got, err := x.Search(context.Background(), q)
		if err != nil || !reflect.DeepEqual(hitKeys(got), hitKeys(want)) {
			t.Fatalf("%s: %d hits, scan %d, %v", when, len(got), len(want), err)
		}
	}
	var logs bytes.Buffer
	logged := Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	fellBack := func(t *testing.T) {
		t.Helper()
		if !strings.Contains(logs.String(), "cue index failed; answering by a scan") {
			t.Errorf("no warning that the scan answered:\n%s", logs.String())
		}
		logs.Reset()
	}
	t.Run("closed", func(t *testing.T) {
		s := genStore(t, 300)
		x, _, err := Open(context.Background(), s, logged)
		if err != nil {
			t.Fatal(err)
		}
		x.idx.Close() // behind its back
		appendLine(t, s, `ed"}`+"\n")
		check(t, x, s, "index closed")
		fellBack(t)
		x.idx = nil // closed already: Close would close it twice (bleve panics)
		x.Close()
	})
	t.Run("disk full", func(t *testing.T) {
		if os.Geteuid() != 0 {
			if os.Getenv("CI") == "true" {
				t.Fatal("CI: this test must run (as root) to mount a small tmpfs")
			}
			t.Skip("mounting a small tmpfs needs root")
		}
		dir := t.TempDir()
		if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=8m"); err != nil {
			t.Fatalf("mount tmpfs: %v", err)
		}
		t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
		src := genStore(t, 2000)
		if out, err := exec.Command("cp", "-r", src.Root+"/.", dir).CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		s, err := episodes.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		x, _, err := Open(context.Background(), s, logged)
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		rng := rand.New(rand.NewPCG(11, 12))
		var more strings.Builder
		more.WriteString(`ed"}` + "\n")
		for i := 0; i < 3000; i++ {
			more.WriteString(genRow(rng, 9000+i, int64(100000+i), time.Now()) + "\n")
		}
		appendLine(t, s, more.String())
		filler := filepath.Join(dir, "filler")
		f, _ := os.Create(filler)
		for chunk := make([]byte, 64<<10); ; {
			if _, err := f.Write(chunk); err != nil {
				break // the disk is full
			}
		}
		f.Close()
		check(t, x, s, "disk full")
		if !strings.Contains(logs.String(), "no space left on device") {
			t.Errorf("the warning does not name the full disk:\n%s", logs.String())
		}
		fellBack(t)
		os.Remove(filler)
		x.Close()
		y, st, err := Open(context.Background(), s, quiet)
		if err != nil {
			t.Fatalf("reopen with space again: %v", err)
		}
		defer y.Close()
		t.Logf("reopen after the full disk: %+v", st)
		check(t, y, s, "after the full disk")
	})
}

// TestCueHugeRow: a row longer than episodes.MaxRowBytes (here 65 MiB, past
// what a watermark could once hash) is skipped with a warning and moves
// the watermark; as the last line it does not make every Open rebuild
// the index, and rows after it are indexed.
func TestCueHugeRow(t *testing.T) {
	s := genStore(t, 30)
	appendLine(t, s, "\n") // complete the torn tail
	x, _, err := Open(context.Background(), s, quiet)
	if err != nil {
		t.Fatal(err)
	}
	x.Close()
	f, err := os.OpenFile(s.Path("index.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"id": "ep_huge", "first_step": 1, "last_step": 2, "summary": "huge needle", "note": "`)
	chunk := bytes.Repeat([]byte("n"), 1<<20)
	for range 65 {
		f.Write(chunk)
	}
	f.WriteString("\"}\n")
	f.Close()

	var logs bytes.Buffer
	x, st, err := Open(context.Background(), s, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	x.Close()
	if st.Rebuilt || st.Indexed != 0 || !strings.Contains(logs.String(), "skipping an over-long row") {
		t.Errorf("open after the huge row: %+v\n%s", st, logs.String())
	}
	for range 2 {
		x, st, err = Open(context.Background(), s, quiet)
		if err != nil {
			t.Fatal(err)
		}
		x.Close()
		if st.Rebuilt || st.Indexed != 0 {
			t.Fatalf("reopen with the huge row last: %+v, want no rebuild and nothing to index", st)
		}
	}
	appendLine(t, s, `{"id": "ep_after", "summary": "after needle", "first_step": 9000, "last_step": 9001}`+"\n")
	x, st, err = Open(context.Background(), s, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if st.Rebuilt || st.Indexed != 1 {
		t.Errorf("reopen after one more row: %+v", st)
	}
	q, _ := query.Parse("needle")
	h, err := x.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(ids(h)); got != "[2:ep_after]" {
		t.Errorf("needle: %s, want only the row after the huge one", got)
	}
}

// TestEventsSearchable: words and event: terms find rows by their event
// lines, in the cue index and the scan alike (a fall's summary need not
// say "hurt").
func TestEventsSearchable(t *testing.T) {
	dir := t.TempDir()
	rows := `{"id": "ep_000001", "path": "episodes/ep_000001", "first_step": 1, "last_step": 5, "action_kind": "go_to", "summary": "go_to: walked north", "tags": ["damage"], "events": ["hurt fall 10"], "x": 1, "y": 2, "z": 3, "time": "2026-12-01T10:00:00Z"}
{"id": "ep_000002", "path": "episodes/ep_000002", "first_step": 6, "last_step": 9, "action_kind": "dig_down", "summary": "dig_down: dug", "tags": [], "events": ["pickup dirt +1", "fall damage 3"], "x": 1, "y": 2, "z": 3, "time": "2026-12-01T10:00:01Z"}
{"id": "ep_000003", "path": "episodes/ep_000003", "first_step": 10, "last_step": 12, "action_kind": "look", "summary": "look: hurt nothing", "tags": [], "x": 1, "y": 2, "z": 3, "time": "2026-12-01T10:00:02Z"}
`
	if err := os.WriteFile(filepath.Join(dir, "index.jsonl"), []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := episodes.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	x, _, err := Open(context.Background(), s, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	tests := []struct {
		q    string
		want []string
	}{
		{"hurt", []string{"ep_000001", "ep_000003"}},
		{`"fall damage"`, []string{"ep_000002"}},
		{"fall", []string{"ep_000001", "ep_000002"}},
		{"dirt", []string{"ep_000002"}},
		{"event:hurt", []string{"ep_000001"}},
		{"event:fall", []string{"ep_000001", "ep_000002"}},
		{"event:fall_damage", []string{"ep_000002"}},
		{"event:hurt_fall event:10", []string{"ep_000001"}},
		{"event:damage", []string{"ep_000002"}}, // the tag damage is not an event
		{"event:walked", nil},
		{"event:dirt_fall", nil}, // words of two event lines are not one run
	}
	for _, tt := range tests {
		q, err := query.Parse(tt.q)
		if err != nil {
			t.Fatalf("%s: %v", tt.q, err)
		}
		for name, sr := range map[string]Searcher{"scan": Scan{Store: s}, "cue": x} {
			hits, err := sr.Search(context.Background(), q)
			if err != nil {
				t.Fatalf("%s %s: %v", name, tt.q, err)
			}
			var got []string
			for _, h := range hits {
				got = append(got, filepath.Base(h.Dir))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s %s: got %v, want %v", name, tt.q, got, tt.want)
			}
		}
	}
}
