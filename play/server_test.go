package play

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestServer(t *testing.T) {
	f := newFixture(t, logTask, Options{})
	sock := filepath.Join(f.store.Root, ".mfm", SocketName)
	srv, err := Listen(f.sess, sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
		srv.Close()
	}()
	fi, err := os.Stat(sock)
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf("socket %v mode %v", err, fi.Mode())
	}
	// a second session on the same socket is refused
	if _, err := Listen(f.sess, sock); err == nil || !strings.Contains(err.Error(), "already serving") {
		t.Errorf("second listen: %v", err)
	}
	rep, err := Call(sock, Request{Op: "act", Plan: "go_to x=5 z=0; mine_ahead"}, 10*time.Second)
	if err != nil || !rep.OK || !strings.Contains(rep.Text, "[ACTION] mine_ahead() -> ok") || rep.Turn == nil || rep.Turn.ID != "t0001" || rep.Turn.Source != "act" {
		t.Fatalf("act: %+v %v", rep, err)
	}
	// the reply carries where the run stands as data
	p := rep.Progress
	if p == nil {
		t.Fatal("act reply has no progress")
	}
	used := int(f.world.State().Step - f.sess.Run().StartStep)
	if p.Task != "sim-log" || p.StepsUsed != used || p.StepsLeft != 200-used || p.Budget != 200 || p.Turns != 1 || p.Termination != EndRunning {
		t.Errorf("progress %+v (used %d)", p, used)
	}
	if len(p.Milestones) != 3 || !p.Milestones[0].Reached || p.Milestones[0].Turn != "t0001" || p.Milestones[1].Reached {
		t.Errorf("progress milestones %+v", p.Milestones)
	}
	if fi, err := os.Stat(p.FrameFile); err != nil || fi.Size() == 0 || p.Frame == "" || !strings.Contains(rep.Text, "[FRAME] "+p.Frame+"\n") {
		t.Errorf("progress frame %q (%q): %v", p.FrameFile, p.Frame, err)
	}
	rep, err = Call(sock, Request{Op: "act", Plan: "fly"}, 10*time.Second)
	if err != nil || rep.OK || !rep.Refused || !strings.Contains(rep.Error, `no atom or procedure "fly"`) {
		t.Errorf("bad plan: %+v %v", rep, err)
	}
	rep, err = Call(sock, Request{Op: "list"}, 10*time.Second)
	if err != nil || !strings.Contains(rep.Text, "mine_ahead()") {
		t.Errorf("list: %+v %v", rep, err)
	}
	rep, err = Call(sock, Request{Op: "status"}, 10*time.Second)
	if err != nil || !strings.Contains(rep.Text, "[GOALS] 1 of 3 reached: log@") {
		t.Errorf("status: %+v %v", rep, err)
	}
	if rep.Progress == nil || rep.Progress.Turns != 1 || !rep.Progress.Milestones[0].Reached {
		t.Errorf("status progress: %+v", rep.Progress)
	}
	rep, err = Call(sock, Request{Op: "dance"}, 10*time.Second)
	if err != nil || rep.OK || !strings.Contains(rep.Error, `unknown op "dance"`) {
		t.Errorf("unknown op: %+v %v", rep, err)
	}
	if _, err := Call(filepath.Join(t.TempDir(), "none.sock"), Request{Op: "status"}, time.Second); !errors.Is(err, ErrNoSession) {
		t.Errorf("no session: %v", err)
	}
}
