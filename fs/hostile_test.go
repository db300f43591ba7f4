package fs

// Hostile names and loads on the mount: query names past the length
// limit, names that would forge /.errors, many distinct views and
// queries against the daemon's memory budget (docs/SECURITY.md).

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
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

// bigViewer renders every name with "@big" as viewBytes bytes that
// depend only on the name (so it may call them stable), cheaply.
type bigViewer struct{ renders atomic.Int64 }

const viewBytes = 256 << 10

func (v *bigViewer) View(ctx context.Context, rel string) ([]byte, bool, error) {
	if !strings.Contains(rel, "@big") {
		return nil, false, nil
	}
	v.renders.Add(1)
	h := fnv.New64a()
	h.Write([]byte(rel))
	r := rand.New(rand.NewPCG(h.Sum64(), 1))
	b := make([]byte, viewBytes)
	for i := 0; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	return b, true, nil
}

func (*bigViewer) Stable(rel string) bool { return strings.Contains(rel, "@big") }
func (*bigViewer) Sheet(ctx context.Context, frames, labels []string) ([]byte, error) {
	return []byte("sheet"), nil
}
func (*bigViewer) Grammar() string { return "views: FRAME@bigN.png" }

// bigQuerier answers every query with queryRows rows of 4 KiB: a result
// of about half a MiB.
type bigQuerier struct{}

const queryRows = 128

func (bigQuerier) Grammar() string { return "any query" }
func (bigQuerier) Query(ctx context.Context, q string) ([][]byte, []string, error) {
	rows := make([][]byte, queryRows)
	dirs := make([]string, queryRows)
	for i := range rows {
		rows[i] = []byte(fmt.Sprintf(`{"id":"ep_%06d","summary":%q,"pad":"%s"}`, i, q, strings.Repeat("x", 4000)))
		dirs[i] = fmt.Sprintf("episodes/ep_%06d", i)
	}
	return rows, dirs, nil
}

// liveHeap is the heap held by live objects after two collections, and
// the process's resident set size (VmRSS) after returning free memory to
// the system.
func liveHeap(t *testing.T) (heap, rss uint64) {
	t.Helper()
	runtime.GC()
	runtime.GC()
	debug.FreeOSMemory()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		t.Fatalf("runtime/metrics: no %s", s[0].Name)
	}
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			rss = kb << 10
		}
	}
	return s[0].Value.Uint64(), rss
}

// memoryBound is what the daemon's heap may grow by under
// TestMemoryBudget: the mount's view bytes and query results at their
// budgets, plus 16 MiB for the nodes of the 4,000 names the kernel keeps
// and the runtime's slack.
const memoryBound = ViewBytesBudget + content.QueryCacheBytes + 16<<20

// TestMemoryBudget mounts a store and reads 1,000 distinct views of 256
// KiB that the Viewer calls stable (the kernel keeps their inodes for an
// hour) and 3,000 distinct queries of about half a MiB each, then checks
// that the live heap grew by less than memoryBound: the mount keeps no
// view's bytes in its nodes and no more query results than its budget.
func TestMemoryBudget(t *testing.T) {
	const views, queries = 1000, 3000
	defer func(d time.Duration) { releaseEvery = d }(releaseEvery)
	releaseEvery = 100 * time.Millisecond
	dir := copyFixture(t)
	bv := &bigViewer{}
	tm := mountStoreFor(t, dir, Options{NoAccessLog: true, Hooks: Hooks{Viewer: bv, Querier: bigQuerier{}}}, 3*testWatchdog)
	view := func(i int) string { return tm.path("episodes", "ep_000003", fmt.Sprintf("image@big%d.png", i)) }
	query := func(i int) string { return tm.path("q", fmt.Sprintf("hostile:%d", i), "count") }
	// Warm up: the first view and query allocate what every later one
	// reuses (buffers, pools).
	if _, err := os.ReadFile(view(-1)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(query(-1)); err != nil {
		t.Fatal(err)
	}
	heap0, rss0 := liveHeap(t)
	for i := 0; i < views; i++ {
		b, err := os.ReadFile(view(i))
		if err != nil || len(b) != viewBytes {
			t.Fatalf("view %d: %d bytes, %v", i, len(b), err)
		}
	}
	for i := 0; i < queries; i++ {
		b, err := os.ReadFile(query(i))
		if err != nil || string(b) != strconv.Itoa(queryRows)+"\n" {
			t.Fatalf("query %d: %q, %v", i, b, err)
		}
	}
	// Idle after the burst, the mount gives the free heap back to the
	// system (releaseIdleMemory).
	free := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(free)
	freeAfter := free[0].Value.Uint64()
	deadline := time.Now().Add(10 * time.Second)
	for free[0].Value.Uint64() > releaseAbove && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		metrics.Read(free)
	}
	if f := free[0].Value.Uint64(); f > releaseAbove {
		t.Errorf("idle after the burst, %.1f MiB of free heap are still not returned to the system (more than %d MiB)", mib(f), releaseAbove>>20)
	}
	t.Logf("free heap not returned to the system: %.1f MiB after the burst, %.1f MiB when idle", mib(freeAfter), mib(free[0].Value.Uint64()))
	heap1, rss1 := liveHeap(t)
	n, held := tm.srv.m.queries.Held()
	grew := int64(heap1) - int64(heap0)
	t.Logf("%d views of %d KiB, %d queries of %d rows: live heap %.1f -> %.1f MiB (+%.1f MiB, bound %d MiB), RSS %.1f -> %.1f MiB; query cache %d results, %.1f MiB; %d renders",
		views, viewBytes>>10, queries, queryRows, mib(heap0), mib(heap1), float64(grew)/(1<<20), memoryBound>>20, mib(rss0), mib(rss1), n, float64(held)/(1<<20), bv.renders.Load())
	if grew > memoryBound {
		t.Errorf("the live heap grew by %.1f MiB, more than the %d MiB bound", float64(grew)/(1<<20), memoryBound>>20)
	}
	if held > content.QueryCacheBytes {
		t.Errorf("the query cache holds %d bytes, over its budget of %d", held, content.QueryCacheBytes)
	}
	// The views are still served (from the kernel's cache or rendered
	// again), byte for byte.
	for _, i := range []int{0, views / 2, views - 1} {
		b, err := os.ReadFile(view(i))
		want, _, _ := bv.View(context.Background(), fmt.Sprintf("episodes/ep_000003/image@big%d.png", i))
		if err != nil || !bytes.Equal(b, want) {
			t.Errorf("view %d read again: %d bytes, %v", i, len(b), err)
		}
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
