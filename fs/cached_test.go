package fs

import (
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCachedReads: as root (Options.PerOpen off) episodes/ is a
// read-only mount of its own whose files are read through the kernel's
// page cache. A repeated read of an episode file or a frame
// sends the daemon nothing at all: no OPEN, READ, GETATTR, LOOKUP, FLUSH
// or RELEASE of it. The first read got the content from the daemon
// (READ without a handle) exactly as on disk.
func TestCachedReads(t *testing.T) {
	buf := captureRequests(t)
	store := copyFixture(t)
	frame := make([]byte, 13_000)
	rand.New(rand.NewSource(1)).Read(frame)
	obs := filepath.Join(store, "episodes", "ep_000003", "observation")
	if err := os.MkdirAll(obs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(obs, "image.png"), frame, 0o644); err != nil {
		t.Fatal(err)
	}
	// A file larger than a READ (spliced from the backing file), with
	// a length that is not a multiple of a page.
	big := make([]byte, 3<<20+1234)
	rand.New(rand.NewSource(2)).Read(big)
	if err := os.WriteFile(filepath.Join(store, "episodes", "ep_000003", "big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	tm := mountStore(t, store, Options{NoAccessLog: true, Debug: true})
	if !tm.srv.m.cached {
		t.Fatalf("a mount as root without PerOpen should read episodes/ through the kernel's cache")
	}
	files := []string{"episodes/ep_000003/outcome.json", "episodes/ep_000003/observation/image.png", "episodes/ep_000003/big.bin"}
	for _, p := range files {
		want, err := os.ReadFile(filepath.Join(store, p))
		if err != nil {
			t.Fatal(err)
		}
		if got := mustRun(t, "cat", tm.path(p)); got != string(want) {
			t.Fatalf("cat %s: %d bytes, want the %d on disk", p, len(got), len(want))
		}
	}
	nodes := nodeNames(buf.String())
	mark := buf.Len()
	for i := 0; i < 3; i++ {
		for _, p := range files {
			mustRun(t, "cat", tm.path(p))
		}
	}
	// The kernel queues RELEASE asynchronously; a STATFS of the
	// episodes/ mount made now reaches the daemon after anything queued
	// by the cats' closes.
	requestBarrier(t, buf, tm.path("episodes"))
	rxOp := regexp.MustCompile(`^rx \d+: ([A-Z]+) n(\d+)\b`)
	for _, l := range strings.Split(buf.String()[mark:], "\n") {
		m := rxOp.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		switch m[1] {
		case "OPEN", "READ", "FLUSH", "RELEASE":
			t.Errorf("a repeated cat sent %s: %s", m[1], l)
		case "GETATTR", "LOOKUP":
			if n := nodes[m[2]]; n == "outcome.json" || n == "image.png" || n == "observation" || n == "big.bin" {
				t.Errorf("a repeated cat sent %s of %s: %s", m[1], n, l)
			}
		}
	}
	// Writes are refused by the kernel itself (read-only superblock).
	if _, err := os.OpenFile(tm.path(files[0]), os.O_WRONLY, 0); errnoOfErr(err) != syscall.EROFS {
		t.Errorf("open for writing: %v, want EROFS", err)
	}
}

// TestLiveVirtualFileVersions: in a mount read through the kernel's
// cache a live virtual file (here a view beside a frame that the Viewer
// renders anew each time) behaves like a file the daemon replaces by
// rename whenever its content changes: a new open sees the new content,
// and a descriptor opened before reads its own version, whole and
// unmixed, to its end.
func TestLiveVirtualFileVersions(t *testing.T) {
	v := &countingViewer{calls: map[string]int{}}
	tm := mountCopy(t, Options{NoAccessLog: true, Hooks: Hooks{Viewer: v}})
	live := tm.path("episodes/ep_000003/image@live.png")
	f, err := os.Open(live)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	old := fmt.Sprintf("render %d of episodes/ep_000003/image@live.png", v.n("episodes/ep_000003/image@live.png"))
	head := make([]byte, 5)
	if _, err := io.ReadFull(f, head); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		cur := mustRun(t, "cat", live)
		if cur == old || !strings.HasPrefix(cur, "render ") {
			t.Fatalf("cat %d of a live view: %q (the version opened first: %q)", i, cur, old)
		}
	}
	rest, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(head) + string(rest); got != old {
		t.Errorf("a descriptor opened before the new renders read %q, want its own version %q", got, old)
	}
	var st2 syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st2); err != nil || st2.Size != int64(len(old)) || st2.Size != st.Size {
		t.Errorf("fstat of the old descriptor: size %d %v, want %d", st2.Size, err, len(old))
	}
}

// TestPerOpenMode re-runs the tests of episodes/ and previous/ (reads,
// refused writes, the access log, new episodes and lives, views, cited-by,
// a large store) with per-open handles (Options.PerOpen: how a mount
// without root always runs) in a child test binary.
func TestPerOpenMode(t *testing.T) {
	canMount(t)
	if os.Getenv("MFM_FS_PER_OPEN") != "" {
		t.Skip("already per-open")
	}
	exe, _ := os.Executable()
	tests := []string{"TestReadOnlyRecord", "TestReadOnlyMine", "TestReadTools", "TestAccessLog", "TestAccessLogRepeatedOpens",
		"TestNewEpisodesAndLife", "TestViewCaching", "TestCitedBy", "TestReadOnlyOpensNoFlush", "TestLargeStore"}
	c := exec.Command(exe, "-test.run=^("+strings.Join(tests, "|")+")$", "-test.count=1", "-test.timeout=270s", "-test.v")
	c.Env = append(os.Environ(), "MFM_FS_PER_OPEN=1")
	c.Dir, _ = os.Getwd() // the package directory, never the mount
	out, err := runChild(c, 280*time.Second)
	if err != nil {
		t.Fatalf("per-open child: %v\n%s", err, out)
	}
	passed := 0
	for _, name := range tests {
		if strings.Contains(string(out), "\n--- PASS: "+name+" (") {
			passed++
		} else {
			t.Errorf("per-open child: %s did not pass", name)
		}
	}
	if t.Failed() {
		t.Fatalf("per-open child output:\n%s", out)
	}
	t.Logf("per-open child: %d tests passed", passed)
}

// runChild runs c with a deadline, killing it if it hangs.
func runChild(c *exec.Cmd, d time.Duration) ([]byte, error) {
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = c.CombinedOutput(); close(done) }()
	select {
	case <-done:
		return out, err
	case <-time.After(d):
		c.Process.Kill()
		<-done
		return out, errTimeout
	}
}

var errTimeout = os.ErrDeadlineExceeded

// TestEpisodesListing: listings of episodes/ on its own mount carry
// attributes when the lister stats the entries (READDIRPLUS_AUTO), come
// from the kernel's cache when the directory has not changed, and show a
// new episode at once; inside an episode they carry names only.
func TestEpisodesListing(t *testing.T) {
	old := listingQuiet
	listingQuiet = 100 * time.Millisecond
	t.Cleanup(func() { listingQuiet = old })
	buf := captureRequests(t)
	store := copyFixture(t)
	const n = 3000
	for i := 0; i < n; i++ {
		if err := os.Mkdir(filepath.Join(store, "episodes", fmt.Sprintf("ep_%06d", 100+i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fixture, err := os.ReadDir(filepath.Join(store, "episodes"))
	if err != nil {
		t.Fatal(err)
	}
	total := len(fixture)
	time.Sleep(listingQuiet + 100*time.Millisecond) // the store is now "unchanged" long enough
	tm := mountStore(t, store, Options{NoAccessLog: true, Debug: true})
	if !tm.srv.m.cached {
		t.Fatal("episodes/ is not a mount of its own (as root, without PerOpen, it must be)")
	}
	ep := tm.path("episodes")
	requests := func(script string) (string, map[string]int) {
		t.Helper()
		mark := buf.Len()
		out := mustSh(t, script)
		waitReleasedDirs(t, buf, mark) // the RELEASEDIR is asynchronous
		n := map[string]int{}
		re := regexp.MustCompile(`^rx \d+: (READDIRPLUS|READDIR|LOOKUP|OPENDIR) `)
		for _, l := range strings.Split(buf.String()[mark:], "\n") {
			if m := re.FindStringSubmatch(l); m != nil {
				n[m[1]]++
			}
		}
		return strings.TrimSpace(out), n
	}
	lines := func(out string) int { return len(strings.Split(out, "\n")) }

	// A plain ls looks up the first batch only; the copy of the listing
	// the kernel keeps then lacks attributes, so the ls -l after it is
	// not one LOOKUP per entry either.
	out, ls := requests("ls " + ep)
	if lines(out) != total || ls["READDIRPLUS"] != 1 || ls["READDIR"] < 2 {
		t.Errorf("plain ls: %d names, %v; want %d names, one READDIRPLUS (the first batch) and READDIR for the rest", lines(out), ls, total)
	}
	out, lsl := requests("ls -l " + ep + " | grep -c '^dr-x'")
	if out != strconv.Itoa(total) || lsl["READDIRPLUS"] < 2 || lsl["LOOKUP"] > 100 {
		t.Errorf("ls -l after ls: %s directories, %v; want %d, READDIRPLUS batches and no LOOKUP per entry", out, lsl, total)
	}
	// That ls -l dropped the copy lacking attributes (it was listed
	// through the daemon); the next one fills a new copy, and the
	// listings after it come from the kernel's cache (an OPENDIR each,
	// which the daemon answers). The kernel may drop part of its copy on
	// its own (seen on 6.18 with 100,000 entries): then only the rest is
	// listed again.
	cold := lsl["READDIRPLUS"] + lsl["READDIR"]
	if out, fill := requests("ls -l " + ep + " | grep -c '^dr-x'"); out != strconv.Itoa(total) || fill["LOOKUP"] > 100 {
		t.Errorf("ls -l filling the cache: %s directories, %v; want %d", out, fill, total)
	}
	for i := 0; i < 3; i++ {
		out, warm := requests("ls -l " + ep + " | grep -c '^dr-x'")
		if out != strconv.Itoa(total) || warm["OPENDIR"] != 1 || warm["LOOKUP"] > 10 || warm["READDIRPLUS"]+warm["READDIR"] > cold/2 {
			t.Errorf("warm ls -l %d: %s directories, %v; want %d, from the cache (cold: %v)", i, out, warm, total, lsl)
		}
		t.Logf("warm ls -l %d: %v", i, warm)
	}

	// A new episode shows at once, both right after it arrived (the
	// directory is then too recent to cache) and once it is older
	// (the directory no longer matches the cached version). For the
	// second, the kernel's copy is filled with fresh attributes of
	// episodes/, so the kernel would not see the new mtime itself.
	for i, name := range []string{"ep_900000", "ep_900001"} {
		if i == 1 {
			time.Sleep(dirAttrTTL + 100*time.Millisecond)
			mustSh(t, "stat "+ep+" >/dev/null; ls -l "+ep+" >/dev/null") // fresh for dirAttrTTL
		}
		if err := os.Mkdir(filepath.Join(store, "episodes", name), 0o755); err != nil {
			t.Fatal(err)
		}
		total++
		if i == 1 {
			time.Sleep(listingQuiet + 50*time.Millisecond)
			if listingQuiet+50*time.Millisecond > dirAttrTTL/2 {
				t.Fatal("listingQuiet too long for this test")
			}
		}
		for j := 0; j < 3; j++ {
			out, _ := requests("ls " + ep)
			if lines(out) != total || !strings.Contains(out, name) {
				t.Errorf("ls %d after %s arrived: %d names (want %d), has it: %v", j, name, lines(out), total, strings.Contains(out, name))
			}
			out, _ = requests("ls -l " + ep + " | grep -c '^dr-x'")
			if out != strconv.Itoa(total) {
				t.Errorf("ls -l %d after %s arrived: %s directories, want %d", j, name, out, total)
			}
		}
	}
	// Inside an episode listings carry names only (a plain ls makes no
	// node for the files; an ls -l looks them up), and the kernel keeps
	// them too.
	first := filepath.Join(ep, fixture[0].Name())
	_, a := requests("ls " + first)
	_, b := requests("ls " + first)
	if a["READDIRPLUS"]+a["READDIR"] == 0 || b["READDIRPLUS"]+b["READDIR"] != 0 {
		t.Errorf("listings of an episode directory: %v, then %v; want the second from the cache", a, b)
	}
	if n := tm.srv.m.episodes.EmbeddedInode().GetChild(fixture[0].Name()); n == nil || len(n.Children()) != 0 {
		t.Errorf("a plain ls of %s made nodes: %v", first, n)
	}
	if _, c := requests("ls -l " + first); c["LOOKUP"] == 0 {
		t.Errorf("ls -l of an episode directory: %v, want its files looked up (the listing carries no attributes)", c)
	}
}

// TestReadDirPlusAuto: with Options.ReadDirPlus (on the store's mount: the
// mounts of episodes/ and previous/ always have it) the kernel chooses per
// listing (READDIRPLUS_AUTO): a plain `ls` of a large directory gets
// attributes with its first batch only (READDIR for the rest), while
// `ls -l`, which stats every entry, gets them with every batch and sends
// no LOOKUP per entry.
func TestReadDirPlusAuto(t *testing.T) {
	buf := captureRequests(t)
	store := copyFixture(t)
	for i := 0; i < 3000; i++ {
		if err := os.Mkdir(filepath.Join(store, "episodes", fmt.Sprintf("ep_%06d", 100+i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tm := mountStore(t, store, Options{NoAccessLog: true, Debug: true, ReadDirPlus: true, PerOpen: true})
	count := func(from int) map[string]int {
		n := map[string]int{}
		re := regexp.MustCompile(`^rx \d+: (READDIRPLUS|READDIR|LOOKUP) `)
		for _, l := range strings.Split(buf.String()[from:], "\n") {
			if m := re.FindStringSubmatch(l); m != nil {
				n[m[1]]++
			}
		}
		return n
	}
	mark := buf.Len()
	if out := mustSh(t, "ls "+tm.path("episodes")+" | wc -l"); strings.TrimSpace(out) == "" {
		t.Fatal("ls printed nothing")
	}
	ls := count(mark)
	if ls["READDIRPLUS"] != 1 || ls["READDIR"] < 2 {
		t.Errorf("plain ls: %v, want one READDIRPLUS (the first batch) and READDIR for the rest", ls)
	}
	mark = buf.Len()
	mustSh(t, "ls -l "+tm.path("episodes")+" >/dev/null")
	lsl := count(mark)
	if lsl["READDIRPLUS"] < 2 || lsl["LOOKUP"] > 100 {
		t.Errorf("ls -l: %v, want READDIRPLUS batches and no LOOKUP per entry", lsl)
	}
	t.Logf("ls: %v; ls -l: %v", ls, lsl)
}

// requestBarrier makes a STATFS request of the mount at dir and waits
// until the request log buf shows it: every request the kernel queued
// for that mount before it has then reached the daemon.
func requestBarrier(t testing.TB, buf *syncBuffer, dir string) {
	t.Helper()
	mark := buf.Len()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatalf("statfs %s: %v", dir, err)
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(buf.String()[mark:], ": STATFS "); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the STATFS request is not in the request log after 10 s")
		}
	}
}

// waitReleasedDirs waits until the request log buf after mark shows as
// many answered RELEASEDIR requests as OPENDIR requests: the kernel sends
// RELEASEDIR after closedir(3) returned, asynchronously.
func waitReleasedDirs(t testing.TB, buf *syncBuffer, mark int) {
	t.Helper()
	rx := regexp.MustCompile(`^rx (\d+): (OPENDIR|RELEASEDIR) `)
	tx := regexp.MustCompile(`^tx (\d+):`)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		opened, released := 0, 0
		releases := map[string]bool{}
		for _, l := range strings.Split(buf.String()[mark:], "\n") {
			if m := rx.FindStringSubmatch(l); m != nil {
				if m[2] == "OPENDIR" {
					opened++
				} else {
					releases[m[1]] = true
				}
			} else if m := tx.FindStringSubmatch(l); m != nil && releases[m[1]] {
				released++
			}
		}
		if released >= opened {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d directories released after 10 s", released, opened)
		}
	}
}
