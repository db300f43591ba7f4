package luanti

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
	mfmfs "github.com/mfm-project/mfm/fs"
)

// TestLiveSmoke starts the real game, records at least 20 episodes with
// frames, mounts the store and finds them through the mount. Under CI=true
// a game that cannot start fails the test; elsewhere it skips.
func TestLiveSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("live game: not in -short")
	}
	if err := Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI: the live harness must run: %v", err)
		}
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 110*time.Second)
	defer cancel()
	dir := t.TempDir()
	storeDir := filepath.Join(dir, "store")
	st, err := Record(ctx, RecordOptions{Store: storeDir, Episodes: 20, Seed: DefaultSeed, GameDir: filepath.Join(dir, "game"), Nice: 5})
	if err != nil {
		t.Fatalf("record: %v (%s)", err, st)
	}
	t.Logf("recorded: %s", st)
	if st.Episodes < 20 || st.Frames < 20 {
		t.Fatalf("want >= 20 episodes and frames, got %s", st)
	}
	s, err := episodes.Open(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := episodes.Verify(s)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("fsck: %v", rep.Issues)
	}
	if os.Geteuid() != 0 {
		t.Log("not root: skipping the mount part")
		return
	}
	mnt := filepath.Join(dir, "mnt")
	os.MkdirAll(mnt, 0o755)
	mctx, mcancel := context.WithCancel(context.Background())
	defer mcancel()
	srv, err := mfmfs.Mount(mctx, s, mnt, mfmfs.Options{NoAccessLog: true, PanicHandler: func(p any) { t.Errorf("panic in FUSE handler: %v", p) }})
	if err != nil {
		t.Fatalf("mount: %v", err)
	}
	t.Cleanup(func() { srv.Unmount() })
	f, err := os.Open(filepath.Join(mnt, "index.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, withFrame := 0, 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		r, err := episodes.ParseRow(sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		rows++
		if strings.HasPrefix(r.Summary, "[ACTION]") {
			if _, err := os.Stat(filepath.Join(mnt, r.Image)); err == nil {
				withFrame++
			}
		}
	}
	if rows < 20 || withFrame < 19 {
		t.Fatalf("through the mount: %d rows, %d action rows with a frame", rows, withFrame)
	}
}
