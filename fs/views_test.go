package fs

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
)

// fakeViewer treats names containing "@" (and map/ names) as views: "@ok"
// renders the path itself as the bytes, anything else is malformed.
type fakeViewer struct{}

func (fakeViewer) View(ctx context.Context, rel string) ([]byte, bool, error) {
	if !strings.Contains(rel, "@") && !strings.HasPrefix(rel, "map/") {
		return nil, false, nil
	}
	if strings.HasSuffix(rel, "@ok.png") || rel == "map/here.txt" {
		return []byte("rendered " + rel), true, nil
	}
	return nil, true, errors.New("view " + rel + ": unknown operation (accepted: @ok)")
}

func (fakeViewer) Sheet(ctx context.Context, frames, labels []string) ([]byte, error) {
	return []byte(strings.Join(labels, ",")), nil
}

func (fakeViewer) Grammar() string { return "views: FRAME@ok.png" }

// TestViews resolves views beside frames and under map/ through the
// Viewer hook: rendered on lookup, never listed, malformed names EINVAL
// with the message in /.errors, other missing names ENOENT.
func TestViews(t *testing.T) {
	tm := mountCopy(t, Options{Hooks: Hooks{Viewer: fakeViewer{}}})
	obs := tm.path("episodes", "ep_000003")
	b, err := os.ReadFile(obs + "/image@ok.png")
	if err != nil || string(b) != "rendered episodes/ep_000003/image@ok.png" {
		t.Fatalf("view beside a frame: %q, %v", b, err)
	}
	if st, err := os.Stat(obs + "/image@ok.png"); err != nil || st.Size() != int64(len(b)) {
		t.Fatalf("stat of a view: %v, %v", st, err)
	}
	ents, err := os.ReadDir(obs)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.Contains(e.Name(), "@") {
			t.Errorf("readdir lists a view: %s", e.Name())
		}
	}
	if _, err := os.Stat(obs + "/image@bad.png"); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("malformed view: %v, want EINVAL", err)
	}
	if _, err := os.Stat(obs + "/nothing.png"); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("missing non-view: %v, want ENOENT", err)
	}
	if err := os.WriteFile(obs+"/image@ok.png", []byte("x"), 0o644); err == nil {
		t.Errorf("write to a view succeeded")
	}
	errs, _ := os.ReadFile(tm.path(".errors"))
	if !strings.Contains(string(errs), "unknown operation (accepted: @ok)") {
		t.Errorf(".errors lacks the viewer's message:\n%s", errs)
	}
	if b, err := os.ReadFile(tm.path("map", "here.txt")); err != nil || string(b) != "rendered map/here.txt" {
		t.Errorf("map/here.txt: %q, %v", b, err)
	}
	if _, err := os.Stat(tm.path("map", "there.png")); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("malformed map: %v, want EINVAL", err)
	}
}
