package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/fleet"
	"github.com/mfm-project/mfm/fleet/fleettest"
)

// sharedServers returns a PostgreSQL superuser URL and an S3 server: the
// ones CI names, else throwaway ones for this test.
func sharedServers(t *testing.T) (admin string, tg fleettest.S3Target) {
	t.Helper()
	admin = os.Getenv(fleettest.EnvPostgres)
	if admin == "" {
		pg, err := fleettest.StartPostgres(false)
		if err != nil {
			fleettest.Unavailable(t, err)
		}
		t.Cleanup(pg.Close)
		admin = pg.URL("postgres")
	}
	tg = fleettest.S3Target{Endpoint: os.Getenv(fleettest.EnvS3), Access: os.Getenv(fleettest.EnvS3Access), Secret: os.Getenv(fleettest.EnvS3Secret)}
	if tg.Endpoint == "" {
		s3, err := fleettest.StartS3()
		if err != nil {
			fleettest.Unavailable(t, err)
		}
		t.Cleanup(s3.Close)
		tg = fleettest.S3Target{Endpoint: s3.Endpoint(), Access: fleettest.S3Access, Secret: fleettest.S3Secret}
	}
	return admin, tg
}

// TestPlayShared: mfmd play --shared shows the other agents' memory under
// agents/ on the playing agent's mount (its agent command lists alice
// there and reads her rows), and ships the agent's own episodes, which
// alice's node then shows under her agents/bob/.
func TestPlayShared(t *testing.T) {
	requireRoot(t)
	admin, tg := sharedServers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db, err := fleettest.NewDatabase(ctx, admin)
	if err != nil {
		fleettest.Unavailable(t, err)
	}
	tg.Bucket = fmt.Sprintf("mfm-play-%d-%d", os.Getpid(), time.Now().UnixNano()%1e12)
	if err := fleettest.MakeBucket(ctx, tg); err != nil {
		fleettest.Unavailable(t, err)
	}
	dir := t.TempDir()

	// alice: two episodes, shipped by a node of her own.
	alice, err := episodes.Init(filepath.Join(dir, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := alice.OpenWriter()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for n := range 2 {
		if _, err := fleettest.Episode(w, n, 3000, "stuck"); err != nil {
			t.Fatal(err)
		}
	}
	node, err := fleet.Start(fleet.Config{Store: alice, Agent: "alice", Postgres: db,
		Objects: fleet.ObjectsConfig{URL: tg.URL("team"), Endpoint: tg.Endpoint, Access: tg.Access, Secret: tg.Secret}})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	waitUntil(t, 30*time.Second, "alice's episodes shipped", func() bool {
		n, err := node.ShipStatus()
		return err == nil && n == 2
	})

	// bob plays with the shared memory mounted.
	t.Setenv("AWS_ACCESS_KEY_ID", tg.Access)
	t.Setenv("AWS_SECRET_ACCESS_KEY", tg.Secret)
	mnt := filepath.Join(dir, "mfm")
	var out, errb bytes.Buffer
	code := dispatch([]string{"play", "--task", "../../tasks/smoke-walk.json", "--world", "sim", "--work", dir, "--mount", mnt,
		"--socket", filepath.Join(dir, "play.sock"), "--max-turns", "6",
		"--shared", db, "--objects", tg.URL("team"), "--objects-endpoint", tg.Endpoint, "--agent", "bob",
		"--agent-cmd", `if [ -n "$MFM_PLAY_ENDED" ]; then cat >/dev/null; exit; fi; ` +
			`ls "$MFM_MEMORY/agents" > agents.txt; grep -o '"id": "[^"]*"' "$MFM_MEMORY/agents/alice/index.jsonl" >> agents.txt; ` +
			`python3 ` + scriptedAgent(t) + ` --print`}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	got, err := os.ReadFile(filepath.Join(dir, "agents.txt"))
	if want := "alice\n\"id\": \"ep_000000\"\n\"id\": \"ep_000001\"\n"; err != nil || string(got) != want {
		t.Errorf("what the agent command found under agents/: %q (err %v), want %q", got, err, want)
	}
	waitUntil(t, 30*time.Second, "bob's episodes in alice's agents/", func() bool {
		names, err := node.Tree().ReadDir(ctx, "bob/episodes")
		return err == nil && len(names) > 0
	})
	// without --mount, sharing is refused before anything starts
	if code := dispatch([]string{"play", "--task", "../../tasks/smoke-walk.json", "--world", "sim", "--work", t.TempDir(),
		"--shared", db, "--objects", tg.URL("team"), "--agent", "carol"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "needs --mount") {
		t.Errorf("--shared without --mount: exit %d, %s", code, errb.String())
	}
}

// waitUntil polls cond until it holds or d passes.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
