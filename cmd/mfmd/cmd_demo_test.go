package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/episodes"
)

// TestDemoTourCommands mounts a copy of the committed run as the demo does
// and runs every command its tour prints (xdg-open becomes "test -s", a
// note goes to the writable mine/): each must succeed and print something,
// so the tour never shows a command that does not work.
func TestDemoTourCommands(t *testing.T) {
	canMountView(t)
	src, err := findUp(demoRun)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	storeDir := filepath.Join(dir, "store")
	if out, err := exec.Command("cp", "-r", src, storeDir).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	store, err := episodes.Open(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	mnt := mountForTest(t, store, filepath.Join(dir, "mnt"))

	var tour bytes.Buffer
	printDemoTour(&tour, mnt, store)
	ran := 0
	for _, line := range strings.Split(tour.String(), "\n") {
		if !strings.HasPrefix(line, "  ") {
			continue
		}
		cmd := strings.TrimSpace(line)
		if i := strings.Index(cmd, "   # "); i >= 0 {
			cmd = strings.TrimSpace(cmd[:i])
		}
		if strings.HasPrefix(cmd, "mfmd ") {
			continue // the CLI's own scripts cover it (testdata/script)
		}
		cmd = strings.Replace(cmd, "xdg-open ", "test -s ", 1)
		out, err := exec.Command("bash", "-c", "set -o pipefail; "+cmd).CombinedOutput()
		if err != nil {
			t.Errorf("tour command %q: %v\n%s", cmd, err, out)
			continue
		}
		if len(out) == 0 && !strings.HasPrefix(cmd, "test ") && !strings.HasPrefix(cmd, "echo ") {
			t.Errorf("tour command %q printed nothing", cmd)
		}
		ran++
	}
	if ran < 10 {
		t.Errorf("ran %d tour commands:\n%s", ran, tour.String())
	}
	if b, _ := os.ReadFile(filepath.Join(storeDir, "mine", "notes.md")); !bytes.Contains(b, []byte("shaft is a trap")) {
		t.Errorf("the tour's note did not reach mine/notes.md: %q", b)
	}
}
