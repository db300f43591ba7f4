package play

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkActTurn is one turn through the control socket on the sim
// world: the request, parsing and checking the plan, one atom recorded
// into the store (2 steps, a frame), reading back its rows and steps, the
// turn block and run.json. It is the engine's own cost per `mfmd act`
// call, without the process start and without game ticks.
func BenchmarkActTurn(b *testing.B) {
	t := &testing.T{}
	f := newFixture(t, `{"instruction": "bench", "budget": 100000000, "milestones": [{"name": "never", "when": "tree>=99"}]}`, Options{})
	sock := filepath.Join(f.store.Root, ".mfm", SocketName)
	srv, err := Listen(f.sess, sock)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go srv.Serve(ctx)
	defer func() { cancel(); srv.Close(); f.rec.Close() }()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := Call(sock, Request{Op: "act", Plan: fmt.Sprintf("look_abs yaw=%d", i%360)}, time.Minute)
		if err != nil || !rep.OK {
			b.Fatalf("turn %d: %v %s", i, err, rep.Error)
		}
	}
}
