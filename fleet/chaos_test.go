package fleet

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mfm-project/mfm/fleet/fleettest"
)

// TestChaos kills PostgreSQL and then the object server while an agent
// records; the agent keeps recording into its store, and when the servers
// are back every episode reaches the other agent exactly once, with its
// files.
func TestChaos(t *testing.T) {
	pg, url := ownPostgres(t)
	s3, err := fleettest.StartS3()
	if err != nil {
		fleettest.Unavailable(t, err)
	}
	defer s3.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tg := fleettest.S3Target{Endpoint: s3.Endpoint(), Access: fleettest.S3Access, Secret: fleettest.S3Secret, Bucket: "chaos"}
	if err := fleettest.MakeBucket(ctx, tg); err != nil {
		t.Fatal(err)
	}
	tm := &team{t: t, pg: url, s3: tg}
	alice, bob := tm.agent("alice", false), tm.agent("bob", false)

	shipped := func() int { r, _ := countRows(t, url, "alice"); return r }
	phase := func(name string, k int) {
		start := time.Now()
		alice.record(t, k)
		t.Logf("%s: recorded %d episodes locally in %v", name, k, time.Since(start))
	}
	// PostgreSQL dies mid-stream (the shipper is busy with these 10):
	// recording goes on locally.
	phase("both up", 10)
	if err := pg.Stop(); err != nil {
		t.Fatal(err)
	}
	phase("postgres down", 15)
	waitFor(t, 10*time.Second, "the shipper to notice", func() bool { _, err := alice.node.ShipStatus(); return err != nil })
	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}
	// The object server dies mid-stream: rows wait for their files.
	phase("postgres back", 5)
	if err := s3.Stop(); err != nil {
		t.Fatal(err)
	}
	phase("object store down", 10)
	waitFor(t, 20*time.Second, "the shipper to notice", func() bool { _, err := alice.node.ShipStatus(); return err != nil })
	before := shipped()
	time.Sleep(300 * time.Millisecond) // a window in which nothing may be shipped
	if n := shipped(); n != before {
		t.Fatalf("%d rows shipped while the object store was down (%d before): a row went ahead of its files", n, before)
	}
	if err := s3.Start(); err != nil {
		t.Fatal(err)
	}
	// Both die, then come back in the other order.
	phase("object store up again", 5)
	pg.Stop()
	s3.Stop()
	phase("both down", 5)
	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}
	if err := s3.Start(); err != nil {
		t.Fatal(err)
	}
	const total = 50
	waitFor(t, 60*time.Second, "all 50 shipped", func() bool { return shipped() == total })
	waitFor(t, 60*time.Second, "bob to follow all 50", func() bool { return bob.node.cat.count("alice", 1) == total })
	if r, d := countRows(t, url, "alice"); r != total || d != total {
		t.Fatalf("%d rows, %d distinct, want %d: an episode was lost or duplicated", r, d, total)
	}
	tree := bob.node.Tree()
	for i := range total {
		rel := fmt.Sprintf("episodes/ep_%06d/observation/image.png", i)
		got, _, err := tree.Open(ctx, "alice/"+rel)
		if err != nil || !bytes.Equal(got, readLocal(t, alice.store, rel)) {
			t.Fatalf("agents/alice/%s: %d bytes, err %v: not alice's frame", rel, len(got), err)
		}
	}
	got, _, _ := tree.Open(ctx, "alice/index.jsonl")
	if !bytes.Equal(got, readLocal(t, alice.store, "index.jsonl")) {
		t.Fatalf("agents/alice/index.jsonl differs from alice's index.jsonl")
	}
	gotGrid, _, _ := tree.Open(ctx, "alice/grid.jsonl")
	if !bytes.Equal(gotGrid, readLocal(t, alice.store, "grid.jsonl")) {
		t.Fatalf("agents/alice/grid.jsonl differs from alice's grid.jsonl")
	}
}
