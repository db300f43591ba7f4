package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
)

// needPython3 returns python3's path; it skips without one, and fails
// under CI=true, where python3 is installed.
func needPython3(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI: the Python client tests must run: %v", err)
	}
	t.Skip("no python3")
	return ""
}

// buildMfmd builds this command into a temporary directory and returns
// the binary's path: the Python client runs the real binary.
func buildMfmd(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "mfmd")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, gobin, "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestPythonClient runs examples/python against the real mfmd: the
// client's unit tests (each makes one of a harness's mistakes on purpose
// and checks the error and a clean fsck), then the example harness records
// a fake game with PNG frames and two lives, and the store is mounted and
// queried: q/ answers match the index rows, frames and views decode.
func TestPythonClient(t *testing.T) {
	py := needPython3(t)
	bin := buildMfmd(t)
	dir, err := filepath.Abs("../../examples/python")
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "MFMD="+bin, "PYTHONDONTWRITEBYTECODE=1")
	run := func(name string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
		defer cancel()
		c := exec.CommandContext(ctx, py, args...)
		c.Dir, c.Env = dir, env
		var stdout, stderr bytes.Buffer
		c.Stdout, c.Stderr = &stdout, &stderr
		if err := c.Run(); err != nil {
			t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", name, err, stdout.String(), stderr.String())
		}
		return stdout.String() + stderr.String()
	}
	out := run("client tests", "-m", "unittest", "-v", "test_mfm_record")
	src, err := os.ReadFile(filepath.Join(dir, "test_mfm_record.py"))
	if err != nil {
		t.Fatal(err)
	}
	if n, want := strings.Count(out, " ... ok"), strings.Count(string(src), "\n    def test_"); n != want || want < 14 {
		t.Fatalf("%d client tests passed, want %d:\n%s", n, want, out)
	}

	storeDir := filepath.Join(t.TempDir(), "store")
	out = run("example harness", "fake_game.py", "--store", storeDir, "--episodes", "40")
	var res struct {
		Episodes int     `json:"episodes"`
		Rate     float64 `json:"episodes_per_s"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &res); err != nil || res.Episodes != 40 {
		t.Fatalf("fake_game.py printed %q (%v)", out, err)
	}
	t.Logf("fake_game.py: %d episodes, %.1f episodes/s", res.Episodes, res.Rate)
	if fsck, err := exec.Command(bin, "fsck", storeDir).CombinedOutput(); err != nil || !strings.Contains(string(fsck), "2 life(s), 40 index row(s)") || !strings.Contains(string(fsck), " 0 error(s), 0 warning(s)") {
		t.Fatalf("fsck: %v\n%s", err, fsck)
	}

	canMountView(t)
	store, err := episodes.Open(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	mnt := mountForTest(t, store, filepath.Join(t.TempDir(), "mnt"))
	cur, _ := (episodes.Life{Root: storeDir}).AllRows()
	all := append([]episodes.Row(nil), cur...)
	prev, _ := (episodes.Life{Root: filepath.Join(storeDir, "previous", "life_1")}).AllRows()
	all = append(all, prev...)
	count := func(rows []episodes.Row, keep func(episodes.Row) bool) int {
		n := 0
		for _, r := range rows {
			if keep(r) {
				n++
			}
		}
		return n
	}
	damage := func(r episodes.Row) bool { return slices.Contains(r.Tags, "damage") }
	chop := func(r episodes.Row) bool { return r.ActionKind != nil && *r.ActionKind == "chop" }
	for _, c := range []struct {
		q    string
		want int
	}{
		{"tag:damage", count(cur, damage)},
		{"life:all tag:damage", count(all, damage)},
		{"action:chop", count(cur, chop)},
		{"life:all tag:initial", 2},
	} {
		if c.want == 0 {
			t.Fatalf("%s: the example recorded none", c.q)
		}
		b, err := os.ReadFile(filepath.Join(mnt, "q", c.q, "count"))
		if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(c.want) {
			t.Errorf("q/%s/count = %q (%v), want %d", c.q, b, err, c.want)
		}
	}
	// a frame and a view of it, through the kernel
	for _, c := range []struct {
		rel  string
		w, h int
	}{
		{"episodes/ep_000001/observation/image.png", 320, 180},
		{"episodes/ep_000001/observation/image@zoom=2.png", 640, 360},
		{"previous/life_1/episodes/ep_000003/frames/000015.png", 320, 180},
	} {
		f, err := os.Open(filepath.Join(mnt, c.rel))
		if err != nil {
			t.Errorf("%s: %v", c.rel, err)
			continue
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil || img.Bounds().Dx() != c.w || img.Bounds().Dy() != c.h {
			t.Errorf("%s: %v %v, want %dx%d", c.rel, err, img, c.w, c.h)
		}
	}
	// the paper's tool over the mount
	ep, err := exec.Command(bin, "episodes", "--store", mnt, "--tag", "damage", "--last", "1").CombinedOutput()
	if err != nil || !strings.Contains(string(ep), "tags=damage") {
		t.Errorf("mfmd episodes over the mount: %v\n%s", err, ep)
	}
}
