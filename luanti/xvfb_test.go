package luanti

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"
)

// TestXvfbDisplays: Xvfb starts beside lock files left by killed X
// servers (every display the old scan of /tmp/.X*-lock tried was taken
// on a machine that had run the live tests a few hundred times); two
// games started at once get displays of their own; Stop removes the
// display's socket, so nothing is left behind for the next start.
func TestXvfbDisplays(t *testing.T) {
	requireGame(t)
	// Stale locks, as a SIGKILLed Xvfb leaves them: a pid that is not running.
	for n := range 400 {
		p := fmt.Sprintf("/tmp/.X%d-lock", n)
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "%10d\n", 1<<22+1) // above pid_max's default: never running
		f.Close()
		t.Cleanup(func() { os.Remove(p) })
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	games := make([]*Game, 2)
	errs := make(chan error, len(games))
	for i := range games {
		games[i] = &Game{cfg: Config{Dir: t.TempDir(), Width: 64, Height: 64}, done: make(chan struct{})}
		t.Cleanup(games[i].Stop)
		go func() { errs <- games[i].startXvfb(ctx) }()
	}
	for range games {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if games[0].Display == games[1].Display {
		t.Fatalf("two games on one display %s", games[0].Display)
	}
	for _, g := range games {
		x, err := DialX(g.Display)
		if err != nil {
			t.Fatalf("connect to %s: %v", g.Display, err)
		}
		x.Close()
	}
	for _, g := range games {
		sock := "/tmp/.X11-unix/X" + g.Display[1:]
		g.Stop()
		if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after Stop: %v, want it removed", sock, err)
		}
	}
}
