package fs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
)

// makeLargeStore writes a store with n minimal episodes under dir: each
// episodes/ep_NNNNNN/ holds only action.json, and index.jsonl has one
// short row per episode. Directories are created by a few goroutines
// (100,000 take ~2–4 s here).
func makeLargeStore(t testing.TB, dir string, n int) {
	t.Helper()
	ep := filepath.Join(dir, episodes.EpisodesDir)
	if err := os.MkdirAll(ep, 0o755); err != nil {
		t.Fatal(err)
	}
	workers := max(4, 2*runtime.NumCPU())
	var wg sync.WaitGroup
	errc := make(chan error, workers)
	action := []byte(`{"kind": "go_to", "args": {}}` + "\n")
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += workers {
				d := filepath.Join(ep, fmt.Sprintf("ep_%06d", i))
				if err := os.Mkdir(d, 0o755); err != nil {
					errc <- err
					return
				}
				if err := os.WriteFile(filepath.Join(d, "action.json"), action, 0o644); err != nil {
					errc <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	var idx bytes.Buffer
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("ep_%06d", i)
		fmt.Fprintf(&idx, `{"id": %q, "path": "episodes/%s", "kind": "episode", "first_step": %d, "last_step": %d, "tags": []}`+"\n", id, id, i, i+1)
	}
	for name, data := range map[string][]byte{
		episodes.IndexFileName: idx.Bytes(),
		episodes.LogFileName:   nil,
		episodes.GridFileName:  nil,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// largeStoreN is the size of TestLargeStore's big store.
const largeStoreN = 100_000

// TestLargeStore mounts a store whose episodes/ has 100,000 entries:
// mounting reads no episode (no node below episodes/ exists after
// Mount, nor after a plain ls), takes about as long as for 1,000
// episodes, and ls, ls -l and find list every entry.
func TestLargeStore(t *testing.T) {
	canMount(t)
	if testing.Short() {
		t.Skip("-short")
	}
	var bodyDone time.Time
	t.Cleanup(func() { t.Logf("cleanup (unmounts, removing the stores): %v", time.Since(bodyDone)) })
	defer func() { bodyDone = time.Now() }()
	scratch := scratchDir(t)
	small := filepath.Join(scratch, "small")
	big := filepath.Join(scratch, "big")
	start := time.Now()
	makeLargeStore(t, small, 1000)
	makeLargeStore(t, big, largeStoreN)
	t.Logf("generated 1,000 + %d episodes in %v", largeStoreN, time.Since(start))

	// Mount time: best of 3 for each size.
	mountTime := func(dir string) time.Duration {
		best := time.Duration(1 << 62)
		for i := 0; i < 3; i++ {
			t0 := time.Now()
			tm := mountStore(t, dir, Options{NoAccessLog: true})
			d := time.Since(t0)
			if n := len(tm.srv.m.episodes.EmbeddedInode().Children()); n != 0 {
				t.Errorf("%s: %d episode nodes exist right after mount", dir, n)
			}
			tm.unmount()
			best = min(best, d)
		}
		return best
	}
	t1k, t100k := mountTime(small), mountTime(big)
	t.Logf("mount time: 1,000 episodes %v, %d episodes %v (%.2fx)", t1k, largeStoreN, t100k, float64(t100k)/float64(t1k))
	// Generous: mounting must not scale with the number of episodes (a
	// scan of 100,000 directories alone takes far longer than this).
	if t100k > 3*t1k+100*time.Millisecond {
		t.Errorf("mount time grows with episodes: 1k %v, 100k %v", t1k, t100k)
	}

	tm := mountStore(t, big, Options{NoAccessLog: true})
	ep := tm.path("episodes")
	count := func(script string) int {
		t.Helper()
		ctx, cancel := contextTimeout(50 * time.Second)
		defer cancel()
		t0 := time.Now()
		out, err := command(ctx, "sh", "-ec", script).Output()
		n, cerr := strconv.Atoi(strings.TrimSpace(string(out)))
		if err != nil || cerr != nil {
			t.Fatalf("%s: %q, %v", script, out, err)
		}
		t.Logf("%s: %d in %v", script, n, time.Since(t0))
		return n
	}
	if n := count("ls " + ep + " | wc -l"); n != largeStoreN {
		t.Errorf("ls: %d entries, want %d", n, largeStoreN)
	}
	// READDIRPLUS_AUTO: the kernel asks for attributes with the first
	// batch of a listing (195 entries of a 32 KiB getdents buffer), and
	// with the rest only if the lister stats the entries, which ls does not.
	if n := len(tm.srv.m.episodes.EmbeddedInode().Children()); n > 1000 {
		t.Errorf("ls created %d episode nodes (a listing must look up at most its first batch)", n)
	}
	// Cold: attributes come with the listing (READDIRPLUS); warm: the
	// listing and the attributes come from the kernel's caches.
	for i := 0; i < 2; i++ {
		if n := count("ls -l " + ep + " | grep -c '^dr-x'"); n != largeStoreN {
			t.Errorf("ls -l: %d directories, want %d", n, largeStoreN)
		}
	}
	if n := count("cd " + tm.mnt + " && find episodes -mindepth 1 -maxdepth 1 -type d | wc -l"); n != largeStoreN {
		t.Errorf("find -maxdepth 1: %d, want %d", n, largeStoreN)
	}
	// A full find opens every episode directory (~40 s at 100,000 here,
	// measured once by hand); the recursive walk is checked on 1,000.
	tms := mountStore(t, small, Options{NoAccessLog: true})
	if n := count("cd " + tms.mnt + " && find episodes -name action.json | wc -l"); n != 1000 {
		t.Errorf("find -name action.json (1,000 episodes): %d", n)
	}
	// The last episode reads, and the README counts every row.
	last := fmt.Sprintf("ep_%06d", largeStoreN-1)
	mustRun(t, "cat", filepath.Join(ep, last, "action.json"))
	readme := mustRun(t, "head", "-n", "12", tm.path("README.md"))
	if !strings.Contains(readme, fmt.Sprintf("%d episodes", largeStoreN)) || !strings.Contains(readme, last) {
		t.Errorf("README.md of the large store:\n%s", readme)
	}
	t0 := time.Now()
	tm.unmount()
	tms.unmount()
	t.Logf("unmount: %v", time.Since(t0))
}

// scratchDir returns a directory for large generated stores: a private
// tmpfs (as root), unmounted after the test's mounts, because creating
// and removing 100,000 directories on this machine's disk takes ~8 s
// and ~40 s; without root, a plain t.TempDir().
func scratchDir(t *testing.T) string {
	dir := t.TempDir()
	if os.Geteuid() != 0 {
		return dir
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=4g,mode=0755"); err != nil {
		t.Logf("tmpfs: %v; generating on disk", err)
		return dir
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount scratch tmpfs: %v", err)
		}
	})
	return dir
}
