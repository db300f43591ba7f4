package fs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// concurrencyEpisodes is how many episodes TestConcurrentReaders records:
// the 10,000 (MFM_FS_CONCURRENCY_EPISODES overrides it). The
// store is on a private tmpfs (scratchDir), where the recorder's fsync
// per episode costs nothing: on this machine's disk 500 episodes took
// 15–20 s, on tmpfs 10,000 take about a minute with the readers running.
func concurrencyEpisodes() int {
	if n, err := strconv.Atoi(os.Getenv("MFM_FS_CONCURRENCY_EPISODES")); err == nil && n > 0 {
		return n
	}
	return 10_000
}

// concurrencyWatchdog bounds one TestConcurrentReaders run (its own
// watchdog: the package default of 60 s is for small tests).
const concurrencyWatchdog = 240 * time.Second

// TestConcurrentReaders: 8 readers grep the mount in a loop while the
// recorder appends episodes; no reader errs, no count ever goes back,
// and at the end every row is there, through grep -c and through a
// listing of episodes/.
func TestConcurrentReaders(t *testing.T) {
	canMount(t)
	store := filepath.Join(scratchDir(t), "store")
	copyTree(t, fixtureStore, store)
	tm := mountStoreFor(t, store, Options{NoAccessLog: true}, concurrencyWatchdog)
	rec := newTestRecorder(t, tm.store, false)
	n := concurrencyEpisodes()
	base := countEntries(t, tm.path("episodes"))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	rounds := make([]int, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			last := 0
			for {
				select {
				case <-stop:
					return
				default:
				}
				var out []byte
				var err error
				switch i % 4 {
				case 0:
					out, err = toolOut("grep", "-c", `"kind": "episode"`, tm.path("index.jsonl"))
				case 1:
					out, err = toolOut("grep", "-c", `^\[NOTE\] conc-`, tm.path("logs.txt"))
				case 2:
					out, err = toolOut("sh", "-c", "ls "+tm.path("episodes")+" | wc -l")
				case 3:
					out, err = toolOut("grep", "-rc", "go_to", tm.path("episodes", "ep_000005"), tm.path("index.jsonl"))
				}
				if err != nil && i%4 == 1 && strings.TrimSpace(string(out)) == "0" {
					err = nil // grep -c exits 1 when it counts 0 (before the first note)
				}
				if err != nil {
					errs <- fmt.Errorf("reader %d: %v: %s", i, err, out)
					return
				}
				if i%4 != 3 {
					v, _ := strconv.Atoi(strings.TrimSpace(string(out)))
					if v < last {
						errs <- fmt.Errorf("reader %d: count went back from %d to %d", i, last, v)
						return
					}
					last = v
				}
				rounds[i]++
			}
		}(i)
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		rec.episode(fmt.Sprintf("conc-%d", i))
	}
	elapsed := time.Since(start)
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d episodes in %v while 8 readers ran %v rounds", n, elapsed, rounds)
	out := mustRun(t, "grep", "-c", `^\[NOTE\] conc-`, tm.path("logs.txt"))
	if strings.TrimSpace(out) != strconv.Itoa(n) {
		t.Errorf("logs.txt: %s notes, want %d", out, n)
	}
	out = mustRun(t, "grep", "-c", "conc-", tm.path("index.jsonl"))
	if strings.TrimSpace(out) != strconv.Itoa(n) {
		t.Errorf("index.jsonl: %s rows, want %d", out, n)
	}
	if got := countEntries(t, tm.path("episodes")); got != base+n {
		t.Errorf("episodes/: %d entries, want %d", got, base+n)
	}
}

// TestConcurrentReadersGOMAXPROCS1 re-runs TestConcurrentReaders (with
// the same number of episodes), the live-growth, mine/ and query tests in
// a child test binary with GOMAXPROCS=1, where a handler that blocks the
// only running goroutine would hang the mount.
func TestConcurrentReadersGOMAXPROCS1(t *testing.T) {
	canMount(t)
	if os.Getenv("GOMAXPROCS") == "1" {
		t.Skip("already GOMAXPROCS=1")
	}
	exe, _ := os.Executable()
	c := exec.Command(exe, "-test.run=^(TestConcurrentReaders|TestLiveGrowth|TestMineTools|TestQuery)$", "-test.count=1", "-test.timeout=270s", "-test.v")
	c.Env = append(os.Environ(), "GOMAXPROCS=1", "MFM_FS_CONCURRENCY_EPISODES="+strconv.Itoa(concurrencyEpisodes()))
	c.Dir, _ = os.Getwd() // the package directory (fixtures are relative to it), never the mount
	done := make(chan struct{})
	var out []byte
	var err error
	start := time.Now()
	go func() { out, err = c.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(280 * time.Second):
		c.Process.Kill()
		<-done
		t.Fatalf("GOMAXPROCS=1 child timed out:\n%s", out)
	}
	if err != nil {
		t.Fatalf("GOMAXPROCS=1: %v\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "episodes in") || strings.HasPrefix(strings.TrimSpace(l), "--- ") {
			t.Log("GOMAXPROCS=1: " + strings.TrimSpace(l))
		}
	}
	t.Logf("GOMAXPROCS=1 child: %v", time.Since(start))
}

// toolOut runs a tool with the standard timeout (safe from goroutines).
func toolOut(name string, args ...string) ([]byte, error) {
	ctx, cancel := contextTimeout(toolTimeout)
	defer cancel()
	return command(ctx, name, args...).CombinedOutput()
}
