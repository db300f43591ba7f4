package fs

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/fs/content"
)

// TestReadTools runs real tools over the mount and over the native store
// directory: the outputs must be identical.
func TestReadTools(t *testing.T) {
	need(t, "jq")
	store := copyFixture(t)
	addPreviousLife(t, store, 1, 5)
	tm := mountStore(t, store, Options{})
	cases := []struct{ name, script string }{
		{"cat index", "cat index.jsonl"},
		{"cat outcome", "cat episodes/ep_000005/outcome.json"},
		{"cat previous", "cat previous/life_1/index.jsonl previous/life_1/episodes/ep_000002/state/state.json"},
		{"grep -r", "grep -r -n harvest index.jsonl episodes | sort"},
		{"grep -rl", "grep -rl harvest_tree episodes | sort"},
		{"grep -c", "grep -c '\"kind\": \"walked\"' grid.jsonl"},
		{"find files", "find episodes previous -type f | sort"},
		{"find dirs", "find episodes -type d | sort"},
		{"find name", "find . -path ./mine -prune -o -name outcome.json -print | sort | grep -v '^./q/' | grep -v '^./map/'"},
		{"find size", "find episodes -name state.json -size -2k | wc -l"},
		{"jq select", `jq -c 'select(.action_kind == "harvest_tree") | [.id, .last_step, .x, .z]' index.jsonl`},
		{"jq slurp", `jq -s 'map(.tags[]) | group_by(.) | map([.[0], length])' -c index.jsonl`},
		{"jq file", "jq -S . episodes/ep_000010/outcome.json"},
		{"wc", "wc -l logs.txt grid.jsonl index.jsonl"},
		{"tail", "tail -n 3 logs.txt; head -c 300 grid.jsonl"},
		{"ls", "ls episodes; ls episodes/ep_000007 episodes/ep_000007/state"},
		{"ls -l sizes", "ls -l episodes/ep_000007 index.jsonl | awk '{print $5, $NF}'"},
		{"ls -R", "ls -R previous | sort"},
		{"stat", "stat -c '%s %n %F' index.jsonl episodes/ep_000001/outcome.json episodes"},
		{"cp out", "d=$(mktemp -d); cp -r episodes/ep_000003 $d/; cat $d/ep_000003/outcome.json; rm -rf $d"},
		{"md5sum", "find episodes -type f | sort | xargs md5sum"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			native := mustSh(t, "cd "+store+" && "+c.script)
			got := mustSh(t, "cd "+tm.mnt+" && "+c.script)
			if got != native {
				t.Errorf("%s: mount output differs from native\nmount:\n%s\nnative:\n%s", c.script, head(got, 40), head(native, 40))
			}
			if strings.TrimSpace(native) == "" {
				t.Errorf("%s: empty output (the case tests nothing)", c.script)
			}
		})
	}
	t.Run("ls -l modes", func(t *testing.T) {
		out := mustSh(t, "cd "+tm.mnt+" && ls -l episodes/ep_000007 && ls -ld episodes previous/life_1 logs.txt index.jsonl grid.jsonl")
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if strings.HasPrefix(l, "total") {
				continue
			}
			if strings.ContainsRune(l[:10], 'w') {
				t.Errorf("ls -l shows a writable record entry: %s", l)
			}
		}
	})
}

func head(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > n {
		return strings.Join(lines[:n], "") + fmt.Sprintf("… (%d more lines)\n", len(lines)-n)
	}
	return s
}

// TestMineTools drives editors' and tools' write patterns in mine/: each
// result is checked in the store itself.
func TestMineTools(t *testing.T) {
	need(t, "python3", "git", "sed")
	tm := mountCopy(t, Options{})
	mine := tm.path("mine")
	smine := tm.store.Path("mine")
	steps := []struct {
		name, script string
		check        func(t *testing.T)
	}{
		{"cp", "cp " + tm.path("episodes/ep_000004/outcome.json") + " " + mine + "/ep4.json", func(t *testing.T) {
			want, _ := os.ReadFile(tm.store.Path("episodes/ep_000004/outcome.json"))
			got, _ := os.ReadFile(filepath.Join(smine, "ep4.json"))
			if string(got) != string(want) || len(want) == 0 {
				t.Errorf("cp: store has %d bytes, want %d", len(got), len(want))
			}
		}},
		{"mv rename over", "cd " + mine + " && echo one > a.md && echo two > b.md && mv a.md b.md && cat b.md", func(t *testing.T) {
			b, _ := os.ReadFile(filepath.Join(smine, "b.md"))
			if _, err := os.Stat(filepath.Join(smine, "a.md")); err == nil || string(b) != "one\n" {
				t.Errorf("mv: b.md=%q, a.md still there: %v", b, err == nil)
			}
		}},
		{"sed -i", "cd " + mine + " && printf 'tree at ep_000001\\nwater\\n' > notes2.md && sed -i 's/water/lava at ep_000009/' notes2.md", func(t *testing.T) {
			b, _ := os.ReadFile(filepath.Join(smine, "notes2.md"))
			if string(b) != "tree at ep_000001\nlava at ep_000009\n" {
				t.Errorf("sed -i: %q", b)
			}
		}},
		{"python atomic write", `python3 -c '
import os, sys, tempfile
d = sys.argv[1]
fd, tmp = tempfile.mkstemp(dir=d, prefix=".working.")
with os.fdopen(fd, "w") as f:
    f.write("plan: dig down at ep_000012\n")
    f.flush(); os.fsync(f.fileno())
os.chmod(tmp, 0o644)
os.replace(tmp, os.path.join(d, "working.md"))
import pathlib
p = pathlib.Path(d) / "procedures"
p.mkdir(exist_ok=True)
(p / "dig.sh").write_text("#!/bin/sh\necho dig\n")
(p / "dig.sh").chmod(0o755)
print(sorted(x.name for x in pathlib.Path(d).iterdir()))
' ` + mine, func(t *testing.T) {
			b, _ := os.ReadFile(filepath.Join(smine, "working.md"))
			if string(b) != "plan: dig down at ep_000012\n" {
				t.Errorf("working.md: %q", b)
			}
			fi, err := os.Stat(filepath.Join(smine, "procedures/dig.sh"))
			if err != nil || fi.Mode().Perm() != 0o755 {
				t.Errorf("dig.sh: %v %v", fi, err)
			}
			ents, _ := os.ReadDir(smine)
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), ".working.") {
					t.Errorf("temp file left: %s", e.Name())
				}
			}
		}},
		{"exec bit", mine + "/procedures/dig.sh >/dev/null 2>&1 || sh -c 'cd " + mine + "/procedures && ./dig.sh'", nil},
		{"git init and commit", "cd " + mine + " && git init -q . && git -c user.email=a@b -c user.name=agent add -A && " +
			"git -c user.email=a@b -c user.name=agent commit -q -m 'notes' && echo more >> notes2.md && " +
			"git -c user.email=a@b -c user.name=agent commit -q -am more && git log --oneline | wc -l && git status --porcelain && git fsck --no-progress 2>&1", func(t *testing.T) {
			out, err := run(t, "git", "-C", smine, "log", "--format=%s")
			if err != nil || out != "more\nnotes\n" {
				t.Errorf("git log in the store: %q %v", out, err)
			}
		}},
		{"truncate and offset write", "cd " + mine + " && printf 0123456789 > off && truncate -s 4 off && printf XY | dd of=off bs=1 seek=6 conv=notrunc 2>/dev/null", func(t *testing.T) {
			b, _ := os.ReadFile(filepath.Join(smine, "off"))
			if string(b) != "0123\x00\x00XY" {
				t.Errorf("off: %q", b)
			}
		}},
		{"mkdir rmdir symlink", "cd " + mine + " && mkdir -p x/y && rmdir x/y && ln -s ../notes2.md x/n && cat x/n >/dev/null && readlink x/n", func(t *testing.T) {
			l, err := os.Readlink(filepath.Join(smine, "x/n"))
			if err != nil || l != "../notes2.md" {
				t.Errorf("symlink: %q %v", l, err)
			}
		}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if s.name == "exec bit" {
				// Exec a script on the mount through sh (never from this process).
				if out := mustSh(t, "cd "+mine+"/procedures && ./dig.sh"); out != "dig\n" {
					t.Errorf("./dig.sh: %q", out)
				}
				return
			}
			mustSh(t, s.script)
			if s.check != nil {
				s.check(t)
			}
		})
	}
}

// roTargets are the record paths every mutating call must refuse.
var roFiles = []string{
	"logs.txt", "index.jsonl", "grid.jsonl",
	"episodes/ep_000003/outcome.json", "episodes/ep_000003/state/state.json",
	"previous/life_1/index.jsonl", "previous/life_1/episodes/ep_000002/action.json",
}
var roDirs = []string{
	".", "episodes", "episodes/ep_000003", "episodes/ep_000003/state",
	"previous", "previous/life_1", "previous/life_1/episodes", "previous/life_1/episodes/ep_000002",
}

// TestReadOnlyRecord: every mutating syscall on the record fails with
// EROFS, and the store is byte-identical afterwards.
func TestReadOnlyRecord(t *testing.T) {
	store := copyFixture(t)
	addPreviousLife(t, store, 1, 5)
	if err := os.WriteFile(filepath.Join(store, "mine", "mine.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, beforeLines := treeHash(t, store)
	tm := mountStore(t, store, Options{})
	testReadOnly(t, tm, roFiles, roDirs)
	tm.unmount()
	after, afterLines := treeHash(t, store)
	if before != after {
		t.Errorf("store changed:\n%s", diffLines(beforeLines, afterLines))
	}
}

// TestReadOnlyMine: --read-only makes mine/ EROFS too.
func TestReadOnlyMine(t *testing.T) {
	store := copyFixture(t)
	if err := os.MkdirAll(filepath.Join(store, "mine", "procedures"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(store, "mine", "procedures", "p.sh"), []byte("echo\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	before, beforeLines := treeHash(t, store)
	tm := mountStore(t, store, Options{ReadOnly: true})
	testReadOnly(t, tm, []string{"mine/notes.md", "mine/procedures/p.sh"}, []string{"mine", "mine/procedures", "mine/reflexes"})
	if b, err := os.ReadFile(tm.path("mine/notes.md")); err != nil || len(b) == 0 {
		t.Errorf("read mine/notes.md under --read-only: %v", err)
	}
	if out, err := sh(t, "cd "+tm.mnt+" && echo x >> mine/notes.md"); err == nil || !strings.Contains(err.Error(), "Read-only file system") {
		t.Errorf("echo >> mine/notes.md under --read-only: %q %v", out, err)
	}
	readme, _ := os.ReadFile(tm.path("README.md"))
	if !strings.Contains(string(readme), "read only in this run") {
		t.Errorf("README does not say mine/ is read-only")
	}
	tm.unmount()
	after, afterLines := treeHash(t, store)
	if before != after {
		t.Errorf("store changed:\n%s", diffLines(beforeLines, afterLines))
	}
}

func diffLines(a, b []string) string {
	in := map[string]int{}
	for _, l := range a {
		in[l]++
	}
	for _, l := range b {
		in[l]--
	}
	var out []string
	for l, n := range in {
		if n > 0 {
			out = append(out, "- "+l)
		} else if n < 0 {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

// testReadOnly tries every mutating syscall on files and dirs (relative to
// the mount) and wants EROFS from each.
func testReadOnly(t *testing.T, tm *tmount, files, dirs []string) {
	t.Helper()
	mineFile := tm.path("mine", "notes.md")
	type op struct {
		name string
		do   func(p string) error
	}
	fileOps := []op{
		{"open O_WRONLY", func(p string) error { return closeFd(syscall.Open(p, syscall.O_WRONLY, 0)) }},
		{"open O_RDWR", func(p string) error { return closeFd(syscall.Open(p, syscall.O_RDWR, 0)) }},
		{"open O_APPEND", func(p string) error { return closeFd(syscall.Open(p, syscall.O_WRONLY|syscall.O_APPEND, 0)) }},
		{"open O_TRUNC", func(p string) error { return closeFd(syscall.Open(p, syscall.O_RDONLY|syscall.O_TRUNC, 0)) }},
		{"open O_CREAT existing", func(p string) error { return closeFd(syscall.Open(p, syscall.O_WRONLY|syscall.O_CREAT, 0o644)) }},
		{"truncate", func(p string) error { return syscall.Truncate(p, 0) }},
		{"chmod", func(p string) error { return syscall.Chmod(p, 0o777) }},
		{"chown", func(p string) error { return syscall.Chown(p, 1, 1) }},
		{"utimes", func(p string) error { return syscall.UtimesNano(p, []syscall.Timespec{{Sec: 1}, {Sec: 1}}) }},
		{"setxattr", func(p string) error { return syscall.Setxattr(p, "user.mfm", []byte("x"), 0) }},
		{"removexattr", func(p string) error { return syscall.Removexattr(p, "user.mfm") }},
		{"unlink", func(p string) error { return syscall.Unlink(p) }},
		{"rename in place", func(p string) error { return syscall.Rename(p, p+".new") }},
		{"rename to mine", func(p string) error { return syscall.Rename(p, tm.path("mine", "stolen")) }},
		{"rename from mine over", func(p string) error { return syscall.Rename(mineFile, p) }},
		{"link in place", func(p string) error { return syscall.Link(p, p+".link") }},
		{"link into mine", func(p string) error { return syscall.Link(p, tm.path("mine", "hard")) }},
		{"write through fd", func(p string) error {
			fd, err := syscall.Open(p, syscall.O_RDONLY, 0)
			if err != nil {
				return err
			}
			defer syscall.Close(fd)
			_, err = syscall.Write(fd, []byte("x"))
			if err == syscall.EBADF {
				return syscall.EROFS // the kernel refuses before asking us: fine
			}
			return err
		}},
	}
	dirOps := []op{
		{"create", func(p string) error {
			return closeFd(syscall.Open(filepath.Join(p, "new.txt"), syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL, 0o644))
		}},
		{"mkdir", func(p string) error { return syscall.Mkdir(filepath.Join(p, "newdir"), 0o755) }},
		{"mknod", func(p string) error { return syscall.Mknod(filepath.Join(p, "fifo"), syscall.S_IFIFO|0o644, 0) }},
		{"symlink", func(p string) error { return syscall.Symlink("target", filepath.Join(p, "ln")) }},
		{"link from mine", func(p string) error { return syscall.Link(mineFile, filepath.Join(p, "hard")) }},
		{"rename from mine", func(p string) error { return syscall.Rename(mineFile, filepath.Join(p, "moved")) }},
		{"chmod", func(p string) error { return syscall.Chmod(p, 0o777) }},
		{"utimes", func(p string) error { return syscall.UtimesNano(p, []syscall.Timespec{{Sec: 1}, {Sec: 1}}) }},
		{"setxattr", func(p string) error { return syscall.Setxattr(p, "user.mfm", []byte("x"), 0) }},
		{"rmdir", func(p string) error { return syscall.Rmdir(p) }},
		{"rename dir", func(p string) error { return syscall.Rename(p, p+".moved") }},
		{"tmpfile", func(p string) error { return closeFd(syscall.Open(p, syscall.O_RDWR|unix.O_TMPFILE, 0o600)) }},
	}
	for _, f := range files {
		if _, err := os.Lstat(tm.path(f)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, o := range fileOps {
			if strings.HasPrefix(f, "mine/") && strings.Contains(o.name, "mine") {
				continue
			}
			err := o.do(tm.path(f))
			if crossesMount(tm, o.name, f) && errnoOfErr(err) == syscall.EXDEV {
				continue
			}
			if errnoOfErr(err) != syscall.EROFS {
				t.Errorf("%s %s: got %v, want EROFS", o.name, f, err)
			}
		}
	}
	for _, d := range dirs {
		for _, o := range dirOps {
			if d == "." && (o.name == "rmdir" || o.name == "rename dir") {
				continue // the mount point itself: EBUSY from the kernel
			}
			if strings.HasPrefix(d, "mine") && strings.Contains(o.name, "mine") {
				continue
			}
			err := o.do(tm.path(d))
			want := syscall.EROFS
			if o.name == "tmpfile" && errnoOfErr(err) == syscall.EOPNOTSUPP {
				continue // the kernel did not ask (no O_TMPFILE support negotiated)
			}
			if crossesMount(tm, o.name, d) && errnoOfErr(err) == syscall.EXDEV {
				continue
			}
			if (d == "episodes" || d == "previous") && tm.srv.m.cached && (o.name == "rmdir" || o.name == "rename dir") && errnoOfErr(err) == syscall.EBUSY {
				continue // a mount point: the kernel refuses before asking anyone
			}
			if errnoOfErr(err) != want {
				t.Errorf("%s %s: got %v, want EROFS", o.name, d, err)
			}
		}
	}
	// Nothing appeared or vanished in the tree.
	if _, err := os.Stat(tm.path("mine", "notes.md")); err != nil && !strings.HasPrefix(files[0], "mine/") {
		t.Errorf("mine/notes.md gone: %v", err)
	}
}

func closeFd(fd int, err error) error {
	if err == nil {
		syscall.Close(fd)
	}
	return err
}

// TestLiveGrowth: rows the recorder appends while mounted are seen at once
// by stat, grep, tail -f (index.jsonl and logs.txt) and an fd held open.
func TestLiveGrowth(t *testing.T) {
	need(t, "python3")
	tm := mountCopy(t, Options{})
	rec := newTestRecorder(t, tm.store, false)

	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	tails := map[string]*lineWaiter{}
	tailPids := map[string]int{}
	for _, f := range []string{"index.jsonl", "logs.txt"} {
		c := command(ctx, "tail", "-n", "0", "-F", "-s", "0.05", tm.path(f))
		out, err := c.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		tails[f] = newLineWaiter(out)
		tailPids[f] = c.Process.Pid
	}
	// A reader holding one fd open across appends.
	py := command(ctx, "python3", "-u", "-c", `
import sys, time
f = open(sys.argv[1]); f.read(); print("ready", flush=True)
want = sys.stdin.readline().strip()
buf = ""; end = time.time() + 15
while time.time() < end:
    buf += f.read()
    if want in buf:
        print("seen", want, flush=True); sys.exit(0)
    time.sleep(0.02)
print("missed", want, len(buf), flush=True); sys.exit(1)
`, tm.path("index.jsonl"))
	pyIn, _ := py.StdinPipe()
	pyOut, _ := py.StdoutPipe()
	if err := py.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { py.Process.Kill(); py.Wait() })
	pyLines := newLineWaiter(pyOut)
	pyLines.wait(t, "ready", 10*time.Second)
	for f, pid := range tailPids {
		waitOpenAtEnd(t, pid, tm.path(f))
	}

	for i := 0; i < 5; i++ {
		marker := fmt.Sprintf("growth-marker-%d", i)
		before, _ := os.Stat(tm.path("index.jsonl"))
		row := rec.episode(marker)
		if i == 0 {
			fmt.Fprintln(pyIn, marker)
		}
		after, err := os.Stat(tm.path("index.jsonl"))
		if err != nil || after.Size() <= before.Size() {
			t.Errorf("stat right after append: size %d -> %v (%v)", before.Size(), after, err)
		}
		native, _ := os.Stat(tm.store.Path("index.jsonl"))
		if after.Size() != native.Size() {
			t.Errorf("mount size %d, store size %d", after.Size(), native.Size())
		}
		if out, err := run(t, "grep", "-c", marker, tm.path("index.jsonl")); err != nil || out != "1\n" {
			t.Errorf("grep right after append of %s: %q %v", row.ID, out, err)
		}
		if out, err := run(t, "grep", "-c", "^\\[NOTE\\] "+marker, tm.path("logs.txt")); err != nil || out != "1\n" {
			t.Errorf("grep logs.txt right after append: %q %v", out, err)
		}
		if _, err := os.Stat(tm.path("episodes", row.ID, "state", "state.json")); err != nil {
			t.Errorf("new episode %s not visible: %v", row.ID, err)
		}
		tails["index.jsonl"].wait(t, `"id": "`+row.ID+`"`, 10*time.Second)
		tails["logs.txt"].wait(t, marker, 10*time.Second)
	}
	pyLines.wait(t, "seen", 15*time.Second)
}

// TestNewEpisodesAndLife: episodes recorded while mounted appear in
// listings; a new life moves the record to previous/life_N and the mount
// shows both without remounting.
func TestNewEpisodesAndLife(t *testing.T) {
	tm := mountCopy(t, Options{})
	n0 := countEntries(t, tm.path("episodes"))
	mustRun(t, "ls", "-l", tm.path("episodes")) // the kernel caches the listing's entries
	rec := newTestRecorder(t, tm.store, false)
	var ids []string
	for i := 0; i < 3; i++ {
		ids = append(ids, rec.episode("").ID)
	}
	out := mustRun(t, "ls", tm.path("episodes"))
	for _, id := range ids {
		if !strings.Contains(out, id+"\n") {
			t.Errorf("ls episodes: no %s", id)
		}
	}
	if n := countEntries(t, tm.path("episodes")); n != n0+3 {
		t.Errorf("episodes: %d entries, want %d", n, n0+3)
	}
	readme, _ := os.ReadFile(tm.path("README.md"))
	if !strings.Contains(string(readme), fmt.Sprintf("%d episodes in this life", n0+3)) || !strings.Contains(string(readme), ids[2]) {
		t.Errorf("README.md does not count the new episodes:\n%s", head(string(readme), 12))
	}

	// A new life.
	oldOutcome, _ := os.ReadFile(tm.path("episodes", "ep_000005", "outcome.json"))
	if _, err := rec.r.Writer().NewLife(); err != nil {
		t.Fatal(err)
	}
	rec2 := rec // same recorder continues in the new life
	first := rec2.episode("first of life 2")
	waitFor(t, 5*time.Second, "previous/life_1 listed", func() bool {
		out, _ := run(t, "ls", tm.path("previous"))
		return out == "life_1\n"
	})
	if b, err := os.ReadFile(tm.path("previous", "life_1", "episodes", "ep_000005", "outcome.json")); err != nil || string(b) != string(oldOutcome) {
		t.Errorf("previous/life_1/episodes/ep_000005/outcome.json: %v", err)
	}
	waitFor(t, 5*time.Second, "episodes/ shows the new life", func() bool {
		out, _ := run(t, "ls", tm.path("episodes"))
		_, err := os.Stat(tm.path("episodes", "ep_000005"))
		return strings.Contains(out, first.ID) && countEntries(t, tm.path("episodes")) == 1 && err != nil
	})
	idx, _ := os.ReadFile(tm.path("index.jsonl"))
	if strings.Count(string(idx), "\n") != 1 || !strings.Contains(string(idx), first.ID) {
		t.Errorf("index.jsonl of the new life: %q", idx)
	}
	readme, _ = os.ReadFile(tm.path("README.md"))
	if !strings.Contains(string(readme), "Life 2") || !strings.Contains(string(readme), fmt.Sprintf("life_1: %d episodes", n0+3)) {
		t.Errorf("README.md after new life:\n%s", head(string(readme), 14))
	}
}

func countEntries(t testing.TB, dir string) int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

func waitFor(t testing.TB, d time.Duration, what string, ok func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !ok() {
		if time.Now().After(end) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestStaleMount: a daemon killed with -9 leaves "transport endpoint is
// not connected"; the next mount clears it.
func TestStaleMount(t *testing.T) {
	canMount(t)
	store := copyFixture(t)
	mnt := filepath.Join(t.TempDir(), "mnt")
	os.Mkdir(mnt, 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	exe, _ := os.Executable()
	c := command(ctx, exe, "-test.run=^$")
	c.Env = append(c.Env, "MFM_FS_TEST_DAEMON="+store+"\n"+mnt)
	out, _ := c.StdoutPipe()
	c.Stderr = os.Stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Process.Kill()
		c.Wait()
		if isMounted(mnt) {
			syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	})
	sc := bufio.NewScanner(out)
	if !sc.Scan() || sc.Text() != "ready" {
		t.Fatalf("daemon did not start: %q", sc.Text())
	}
	if _, err := os.Stat(filepath.Join(mnt, "README.md")); err != nil {
		t.Fatalf("daemon mount: %v", err)
	}
	c.Process.Signal(syscall.SIGKILL)
	c.Wait()
	// statfs always reaches the (dead) daemon; a stat of the root may be
	// answered from the kernel's 1 s attribute cache.
	var st syscall.Statfs_t
	if err := syscall.Statfs(mnt, &st); err != syscall.ENOTCONN {
		t.Fatalf("after kill -9: statfs = %v, want ENOTCONN", err)
	}
	if _, err := os.ReadDir(mnt); !errors.Is(err, syscall.ENOTCONN) {
		t.Fatalf("after kill -9: readdir = %v, want ENOTCONN", err)
	}
	tm := mountStore(t, store, Options{})
	_ = tm // mountStore mounts on a fresh dir; now mount on the stale one
	s, _ := episodes.Open(store)
	srv, err := Mount(ctx, s, mnt, Options{NoAccessLog: true, Logger: tm.srv.m.log})
	if err != nil {
		t.Fatalf("mount on a stale mount point: %v", err)
	}
	t.Cleanup(func() { srv.Unmount(); srv.Wait() })
	if b, err := os.ReadFile(filepath.Join(mnt, "index.jsonl")); err != nil || len(b) == 0 {
		t.Errorf("read after remount: %v", err)
	}
	// A live mount is refused.
	if _, err := Mount(ctx, s, mnt, Options{NoAccessLog: true}); err == nil || !strings.Contains(err.Error(), "already mounted") {
		t.Errorf("mount over a live mount: %v", err)
	}
}

// TestAccessLog: the access log records what was opened, with kinds.
func TestAccessLog(t *testing.T) {
	tm := mountCopy(t, Options{})
	mustSh(t, "cd "+tm.mnt+" && cat README.md episodes/ep_000002/outcome.json index.jsonl >/dev/null && ls episodes >/dev/null && grep -q x mine/notes.md; cat .errors >/dev/null; cat now/state.json > /dev/null")
	tm.unmount()
	got := map[string]string{}
	for _, r := range accessRecords(t, tm) {
		if _, err := time.Parse(time.RFC3339Nano, r.Time); err != nil || r.Pid == 0 {
			t.Errorf("access row %+v: time %v pid %d", r, err, r.Pid)
		}
		got[r.Path] = r.Kind
	}
	for p, k := range map[string]string{
		"/README.md":                       "readme",
		"/episodes/ep_000002/outcome.json": "episode",
		"/index.jsonl":                     "index",
		"/episodes":                        "list",
		"/mine/notes.md":                   "note",
		"/.errors":                         "errors",
		"/now/state.json":                  "now",
	} {
		if got[p] != k {
			t.Errorf("access log: %s kind %q, want %q (log: %v)", p, got[p], k, got)
		}
	}
	for p := range got {
		if strings.Contains(p, ".mfm") {
			t.Errorf("access log records itself: %s", p)
		}
	}
}

// accessRecords reads the access log of tm's store (after unmount: then
// everything is written), failing the test on a row that does not decode.
func accessRecords(t *testing.T, tm *tmount) []content.AccessRecord {
	t.Helper()
	b, err := os.ReadFile(tm.store.Path(".mfm", content.AccessFileName))
	if err != nil {
		t.Fatal(err)
	}
	var rs []content.AccessRecord
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r content.AccessRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("bad access row %q: %v", l, err)
		}
		rs = append(rs, r)
	}
	return rs
}

// TestAccessLogRepeatedOpens: a file of an episode, a view beside it
// and cited-by, each opened again after the 1 s in which repeats are
// folded, get a record per open with the same path and kind. As root the
// opens come from the fanotify watcher of episodes/' own mount, which
// finds the second opens by file handle (fanotify.Options.FixedNames).
func TestAccessLogRepeatedOpens(t *testing.T) {
	tm := mountCopy(t, Options{Hooks: Hooks{Viewer: fakeViewer{}, CitedBy: func(ctx context.Context, dir string) ([]byte, error) {
		return []byte("mine/notes.md  (" + dir + ")\n"), nil
	}}})
	want := map[string]string{
		"/episodes/ep_000003/outcome.json": "episode",
		"/episodes/ep_000003/image@ok.png": "view",
		"/episodes/ep_000003/cited-by":     "cited-by",
	}
	open := "cd " + tm.mnt + " && cat episodes/ep_000003/outcome.json episodes/ep_000003/image@ok.png episodes/ep_000003/cited-by >/dev/null"
	mustSh(t, open)
	time.Sleep(1100 * time.Millisecond)
	mustSh(t, open)
	tm.unmount() // the watchers report what was queued before they stop
	hits := int64(0)
	for _, sub := range tm.srv.subs {
		if sub.opens != nil {
			hits += sub.opens.PathHits()
		}
	}
	got := map[string][]content.AccessRecord{}
	for _, r := range accessRecords(t, tm) {
		got[r.Path] = append(got[r.Path], r)
	}
	for p, kind := range want {
		rs := got[p]
		if len(rs) != 2 || rs[0].Kind != kind || rs[1].Kind != kind || rs[0].Pid == rs[1].Pid {
			t.Errorf("access log for %s: %+v, want two records of kind %q by two processes", p, rs, kind)
		}
	}
	if tm.srv.m.cached && hits != 3 {
		t.Errorf("the watcher found %d second opens by file handle, want 3 (the same inodes again)", hits)
	}
	t.Logf("second opens found by file handle: %d", hits)
}

// crossesMount reports whether the operation named op moves or links a
// file between mine/ and p while p is in episodes/ or previous/, mounts of
// their own (Options.PerOpen off): the kernel refuses that with EXDEV
// before any filesystem is asked, which changes nothing either (mv then
// copies, and the copy into the record is EROFS).
func crossesMount(tm *tmount, op, p string) bool {
	return tm.srv.m.cached && strings.Contains(op, "mine") &&
		(strings.HasPrefix(p, "episodes") || strings.HasPrefix(p, "previous"))
}

// waitOpenAtEnd waits until process pid holds path open with its offset
// at the file's end (tail -n 0 -F has opened it and seeked to the end).
func waitOpenAtEnd(t testing.TB, pid int, path string) {
	t.Helper()
	fdDir := fmt.Sprintf("/proc/%d/fd", pid)
	atEnd := func() bool {
		st, err := os.Stat(path)
		if err != nil {
			return false
		}
		ents, _ := os.ReadDir(fdDir)
		for _, e := range ents {
			if l, err := os.Readlink(filepath.Join(fdDir, e.Name())); err != nil || l != path {
				continue
			}
			info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, e.Name()))
			var pos int64
			if err == nil && strings.HasPrefix(string(info), "pos:") {
				if _, err := fmt.Sscanf(string(info), "pos:\t%d", &pos); err == nil && pos == st.Size() {
					return true
				}
			}
		}
		return false
	}
	waitFor(t, 10*time.Second, "tail -F at the end of "+path, atEnd)
}
