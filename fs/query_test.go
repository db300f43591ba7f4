package fs

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/fs/content"
)

// fakeQuerier answers a tiny query language straight from the store's
// files (never through the mount): "all", "tag:T", "life:N" (rows of
// previous/life_N instead of the current life), "last:N", "hang"
// (blocks, ignoring its context, until release is closed). Anything
// else is malformed.
type fakeQuerier struct {
	root    string
	release chan struct{}
}

const fakeGrammar = "fake grammar: all | tag:T | life:N | last:N | hang"

func (q *fakeQuerier) Grammar() string { return fakeGrammar }

func (q *fakeQuerier) Query(ctx context.Context, query string) ([][]byte, []string, error) {
	var tag string
	life, last := 0, -1
	for _, term := range strings.Fields(query) {
		k, v, _ := strings.Cut(term, ":")
		switch {
		case term == "all":
		case term == "hang":
			<-q.release
			return nil, nil, errors.New("released")
		case k == "tag" && v != "":
			tag = v
		case k == "life" || k == "last":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, nil, fmt.Errorf("query %q: %s wants a number, got %q", query, k, v)
			}
			if k == "life" {
				life = n
			} else {
				last = n
			}
		default:
			return nil, nil, fmt.Errorf("query %q: unknown term %q (accepted: all, tag:T, life:N, last:N)", query, term)
		}
	}
	base := ""
	if life > 0 {
		base = filepath.Join(episodes.PreviousDir, episodes.LifeName(life))
	}
	f, err := os.Open(filepath.Join(q.root, base, episodes.IndexFileName))
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var rows [][]byte
	var dirs []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		r, err := episodes.ParseRow(sc.Bytes())
		if err != nil || (tag != "" && !r.HasTag(tag)) {
			continue
		}
		rows = append(rows, r.Raw)
		dirs = append(dirs, filepath.ToSlash(filepath.Join(base, r.Path)))
	}
	if last >= 0 && len(rows) > last {
		rows, dirs = rows[len(rows)-last:], dirs[len(dirs)-last:]
	}
	return rows, dirs, nil
}

// indexLines returns the current life's index rows that carry tag ("" = all).
func indexLines(t *testing.T, store, tag string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(store, episodes.IndexFileName))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		r, err := episodes.ParseRow([]byte(l))
		if err == nil && (tag == "" || r.HasTag(tag)) {
			out = append(out, l)
		}
	}
	return out
}

// TestQuery drives q/<query>/ with real tools through a fake Querier:
// results verbatim, count, links to episodes (and earlier lives), sheet
// of the last matches, malformed queries EINVAL + /.errors, live growth,
// a hung Querier timing out without hanging the mount, access log.
func TestQuery(t *testing.T) {
	need(t, "jq", "readlink", "wc")
	dir := copyFixture(t)
	addPreviousLife(t, dir, 1, 5)
	fq := &fakeQuerier{root: dir, release: make(chan struct{})}
	t.Cleanup(func() { close(fq.release) })
	tm := mountStore(t, dir, Options{RenderTimeout: time.Second, Hooks: Hooks{Querier: fq, Viewer: fakeViewer{}}})
	q := func(elem ...string) string { return tm.path(append([]string{"q"}, elem...)...) }

	t.Run("root", func(t *testing.T) {
		if out := mustRun(t, "ls", q()); out != "README.md\n" {
			t.Errorf("ls q/: %q", out)
		}
		top := mustRun(t, "cat", tm.path("README.md"))
		for _, want := range []string{"Query grammar:", fakeGrammar, "View grammar:", "views: FRAME@ok.png", "/.errors", "life_1.ep_000004", "last 64 matches"} {
			if !strings.Contains(top, want) {
				t.Errorf("/README.md lacks %q:\n%s", want, top)
			}
		}
		readme := mustRun(t, "cat", q("README.md"))
		for _, want := range []string{fakeGrammar, "EINVAL", "/.errors", "last 64 matches", "life_1.ep_000004"} {
			if !strings.Contains(readme, want) {
				t.Errorf("q/README.md lacks %q:\n%s", want, readme)
			}
		}
	})

	t.Run("results", func(t *testing.T) {
		want := indexLines(t, dir, "broke")
		if len(want) == 0 {
			t.Fatal("fixture has no rows tagged broke")
		}
		if out := mustRun(t, "cat", q("tag:broke", "count")); out != strconv.Itoa(len(want))+"\n" {
			t.Errorf("count: %q, want %d", out, len(want))
		}
		if out := mustRun(t, "cat", q("tag:broke", "results.jsonl")); out != strings.Join(want, "\n")+"\n" {
			t.Errorf("results.jsonl not the rows verbatim:\n%s\nwant\n%s", out, strings.Join(want, "\n"))
		}
		if out := mustSh(t, "wc -l < '"+q("tag:broke", "results.jsonl")+"'"); strings.TrimSpace(out) != strconv.Itoa(len(want)) {
			t.Errorf("wc -l: %q", out)
		}
		ids := mustRun(t, "jq", "-r", ".id", q("tag:broke", "results.jsonl"))
		var wantIDs []string
		for _, l := range want {
			var r struct{ ID string }
			_ = json.Unmarshal([]byte(l), &r)
			wantIDs = append(wantIDs, r.ID)
		}
		if ids != strings.Join(wantIDs, "\n")+"\n" {
			t.Errorf("jq -r .id: %q, want %q", ids, wantIDs)
		}
		// ls lists the three files and one link per match, in order.
		ls := mustRun(t, "ls", "-U", q("tag:broke"))
		wantLs := append([]string{"results.jsonl", "count", "sheet.png"}, wantIDs...)
		if ls != strings.Join(wantLs, "\n")+"\n" {
			t.Errorf("ls -U: %q, want %q", ls, wantLs)
		}
		lsl := mustRun(t, "ls", "-l", q("tag:broke"))
		first := wantIDs[0]
		if !strings.Contains(lsl, first+" -> ../../episodes/"+first) {
			t.Errorf("ls -l lacks the link for %s:\n%s", first, lsl)
		}
		if out := mustRun(t, "readlink", q("tag:broke", first)); out != "../../episodes/"+first+"\n" {
			t.Errorf("readlink: %q", out)
		}
		// cd through the link and read the episode.
		got := mustSh(t, "cd '"+q("tag:broke", first)+"' && cat action.json")
		b, _ := os.ReadFile(filepath.Join(dir, "episodes", first, "action.json"))
		if got != string(b) {
			t.Errorf("cat through the link: %q, want %q", got, b)
		}
		if _, err := os.Lstat(q("tag:broke", "ep_999999")); !errors.Is(err, syscall.ENOENT) {
			t.Errorf("a non-match: %v, want ENOENT", err)
		}
		// An empty result is a count of 0, not an error.
		if out := mustRun(t, "cat", q("tag:nosuchtag", "count")); out != "0\n" {
			t.Errorf("empty count: %q", out)
		}
		if out := mustRun(t, "cat", q("tag:nosuchtag", "results.jsonl")); out != "" {
			t.Errorf("empty results: %q", out)
		}
	})

	t.Run("previous-life", func(t *testing.T) {
		ls := mustRun(t, "ls", q("life:1"))
		if !strings.Contains(ls, "life_1.ep_000004\n") || strings.Contains(ls, "\nep_0") {
			t.Errorf("ls q/life:1: %q", ls)
		}
		if out := mustRun(t, "readlink", q("life:1", "life_1.ep_000004")); out != "../../previous/life_1/episodes/ep_000004\n" {
			t.Errorf("readlink: %q", out)
		}
		got := mustSh(t, "cd '"+q("life:1", "life_1.ep_000004")+"' && cat outcome.json")
		b, _ := os.ReadFile(filepath.Join(dir, "previous", "life_1", "episodes", "ep_000004", "outcome.json"))
		if got != string(b) {
			t.Errorf("cat through a previous-life link: %q", got)
		}
	})

	t.Run("sheet", func(t *testing.T) {
		all := indexLines(t, dir, "")
		if len(all) <= content.SheetMaxTiles {
			t.Fatalf("fixture has %d rows; the cap test needs more than %d", len(all), content.SheetMaxTiles)
		}
		got := mustRun(t, "cat", q("all", "sheet.png"))
		labels := strings.Split(got, ",")
		if len(labels) != content.SheetMaxTiles {
			t.Fatalf("sheet of all: %d tiles, want the last %d", len(labels), content.SheetMaxTiles)
		}
		var lastRow struct{ ID string }
		_ = json.Unmarshal([]byte(all[len(all)-1]), &lastRow)
		if labels[len(labels)-1] != lastRow.ID {
			t.Errorf("last tile %q, want %q", labels[len(labels)-1], lastRow.ID)
		}
		if st, err := os.Stat(q("all", "sheet.png")); err != nil || st.Size() != int64(len(got)) {
			t.Errorf("stat sheet.png: %v %v", st, err)
		}
	})

	t.Run("malformed", func(t *testing.T) {
		for _, bad := range []string{"bogus:1", "last:x"} {
			if _, err := os.Stat(q(bad)); !errors.Is(err, syscall.EINVAL) {
				t.Errorf("stat q/%s: %v, want EINVAL", bad, err)
			}
			if _, err := run(t, "ls", q(bad)); err == nil || !strings.Contains(err.Error(), "Invalid argument") {
				t.Errorf("ls q/%s: %v, want Invalid argument", bad, err)
			}
			if _, err := os.ReadFile(q(bad, "count")); !errors.Is(err, syscall.EINVAL) {
				t.Errorf("cat q/%s/count: %v, want EINVAL", bad, err)
			}
		}
		errs := mustRun(t, "cat", tm.path(".errors"))
		for _, want := range []string{"/q/bogus:1", `unknown term "bogus:1"`, "[EINVAL]", fakeGrammar} {
			if !strings.Contains(errs, want) {
				t.Errorf(".errors lacks %q:\n%s", want, errs)
			}
		}
	})

	t.Run("live", func(t *testing.T) {
		before := mustRun(t, "cat", q("all", "count"))
		n, _ := strconv.Atoi(strings.TrimSpace(before))
		rec := newTestRecorder(t, tm.store, false)
		row := rec.episode("query-live")
		if out := mustRun(t, "cat", q("all", "count")); out != strconv.Itoa(n+1)+"\n" {
			t.Errorf("count after an append: %q, want %d", out, n+1)
		}
		if out := mustRun(t, "tail", "-n", "1", q("all", "results.jsonl")); out != string(bytes.TrimRight(row.Raw, "\n"))+"\n" {
			t.Errorf("last result after an append: %q, want %q", out, row.Raw)
		}
		if out := mustSh(t, "cd '"+q("last:1")+"' && ls -U && cd "+row.ID+" && cat action.json >/dev/null && echo ok"); out != "results.jsonl\ncount\nsheet.png\n"+row.ID+"\nok\n" {
			t.Errorf("cd into the new match: %q", out)
		}
		// A directory held open (a shell cd'd into it) lists live too.
		row2 := rec.episode("query-live-2")
		if out := mustSh(t, "cd '"+q("last:2")+"' && ls -U | tail -n 2"); out != row.ID+"\n"+row2.ID+"\n" {
			t.Errorf("last:2 after a second append: %q", out)
		}
	})

	t.Run("hang", func(t *testing.T) {
		start := time.Now()
		done := make(chan error, 1)
		go func() { _, err := os.Stat(q("hang")); done <- err }()
		// The mount keeps answering while a query hangs.
		if out := mustRun(t, "cat", q("tag:broke", "count")); out == "" {
			t.Error("no count while another query hangs")
		}
		mustRun(t, "ls", tm.path("episodes"))
		select {
		case err := <-done:
			if !errors.Is(err, syscall.ETIMEDOUT) {
				t.Errorf("hung query: %v, want ETIMEDOUT", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("hung query answered after %v", d)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a hung Querier hangs the lookup")
		}
		errs := mustRun(t, "cat", tm.path(".errors"))
		if !strings.Contains(errs, "/q/hang") || !strings.Contains(errs, "[ETIMEDOUT]") {
			t.Errorf(".errors lacks the timeout:\n%s", errs)
		}
	})

	t.Run("access-log", func(t *testing.T) {
		p, _ := tm.store.MetaPath(content.AccessFileName)
		deadline := time.Now().Add(5 * time.Second)
		for {
			b, _ := os.ReadFile(p)
			if bytes.Contains(b, []byte(`"path":"/q/tag:broke","kind":"query"`)) &&
				bytes.Contains(b, []byte(`"path":"/q/tag:broke/count","kind":"query"`)) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("access log has no query rows:\n%s", b)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}
