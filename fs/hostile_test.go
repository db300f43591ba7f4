package fs

// Hostile names and loads on the mount: query names past the length
// limit, names that would forge /.errors, many distinct views and
// queries against the daemon's memory budget (docs/SECURITY.md).

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/mfm-project/mfm/fs/content"
	"github.com/mfm-project/mfm/index/query"
)

// countingQuerier counts the queries that reach a Querier.
type countingQuerier struct {
	Querier
	n atomic.Int64
}

func (q *countingQuerier) Query(ctx context.Context, s string) ([][]byte, []string, error) {
	q.n.Add(1)
	return q.Querier.Query(ctx, s)
}

// TestQueryNameLength: a q/ name longer than the documented 255 bytes
// fails with ENAMETOOLONG and a message in /.errors, the same message
// mfmd q (query.Parse) gives, without reaching the Querier; 255 bytes
// is a query.
func TestQueryNameLength(t *testing.T) {
	if content.MaxQueryLen != query.MaxLen {
		t.Fatalf("the mount's query limit %d differs from the index's %d", content.MaxQueryLen, query.MaxLen)
	}
	dir := copyFixture(t)
	fq := &countingQuerier{Querier: &fakeQuerier{root: dir}}
	tm := mountStore(t, dir, Options{Hooks: Hooks{Querier: fq}})
	pad := func(n int) string { return "all" + strings.Repeat(" ", n-len("all")) + "" }

	ok := pad(content.MaxQueryLen)
	if b, err := os.ReadFile(tm.path("q", ok, "count")); err != nil || string(b) == "" {
		t.Fatalf("a %d-byte query: %q, %v", len(ok), b, err)
	}
	before := fq.n.Load()
	// FUSE hands the daemon names up to 1024 bytes (recent kernels up
	// to 4095): the mount refuses them itself.
	for _, n := range []int{content.MaxQueryLen + 1, 1024, 1100} {
		long := strings.Repeat("x", n-len("all")) + "all"
		_, err := os.Stat(tm.path("q", long))
		if !errors.Is(err, syscall.ENAMETOOLONG) {
			t.Errorf("a %d-byte query: %v, want ENAMETOOLONG", n, errnoOfErr(err))
		}
		_, perr := query.Parse(long)
		if perr == nil {
			t.Fatalf("query.Parse accepts %d bytes", n)
		}
		errs, _ := os.ReadFile(tm.path(".errors"))
		if !strings.Contains(string(errs), "[ENAMETOOLONG]\n  "+perr.Error()+"\n") {
			t.Errorf("/.errors lacks %q for a %d-byte query:\n%s", perr.Error(), n, errs)
		}
	}
	if n := fq.n.Load() - before; n != 0 {
		t.Errorf("%d over-long queries reached the Querier", n)
	}
}

// TestErrorsEscapeNames: a query name with a newline and an escape
// sequence neither forges an entry of /.errors nor reaches a terminal.
func TestErrorsEscapeNames(t *testing.T) {
	dir := copyFixture(t)
	tm := mountStore(t, dir, Options{Hooks: Hooks{Querier: &fakeQuerier{root: dir}}})
	name := "bogus\n\n2026-01-01T00:00:00Z  q:all  [EINVAL]\x1b[2J\xff"
	if _, err := os.Stat(tm.path("q", name)); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("malformed query: %v, want EINVAL", err)
	}
	errs, err := os.ReadFile(tm.path(".errors"))
	if err != nil {
		t.Fatal(err)
	}
	out := string(errs)
	if !utf8.ValidString(out) {
		t.Errorf("/.errors is not UTF-8:\n%q", out)
	}
	for i, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "2026-01-01") {
			t.Errorf("line %d forged by the name: %q", i, line)
		}
		if strings.IndexFunc(line, func(r rune) bool { return r != '\t' && !unicode.IsPrint(r) }) >= 0 {
			t.Errorf("line %d has an unprintable character: %q", i, line)
		}
	}
	if !strings.Contains(out, `/q/bogus\n\n2026-01-01T00:00:00Z  q:all  [EINVAL]\x1b[2J\xff  [EINVAL]`) {
		t.Errorf("/.errors lacks the escaped name:\n%s", out)
	}
}
