package fs

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

// TestReadmeProvenance: /README.md shows Hooks.Provenance's section after
// the live counts, re-asks the hook on every read, and a failing hook
// shows what went wrong (also in /.errors) instead of hiding the README.
func TestReadmeProvenance(t *testing.T) {
	section := "## Provenance\n\nThis store was seeded from the frozen artifact `a.tar`.\n"
	var fail atomic.Bool
	tm := mountCopy(t, Options{NoAccessLog: true, Hooks: Hooks{Provenance: func(ctx context.Context) (string, error) {
		if _, ok := ctx.Deadline(); !ok {
			return "", errors.New("no deadline")
		}
		if fail.Load() {
			return "", errors.New("mfm-store.json is not valid JSON")
		}
		return section, nil
	}}})
	b, err := os.ReadFile(tm.path("README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, section), strings.Index(s, "## What is here")
	if i < 0 || j < 0 || i > j || !strings.Contains(s[:max(i, 0)], "## Right now") {
		t.Fatalf("README.md: provenance missing or misplaced:\n%s", s)
	}
	fail.Store(true)
	b, err = os.ReadFile(tm.path("README.md"))
	if err != nil || !strings.Contains(string(b), "provenance could not be read: mfm-store.json is not valid JSON") || !strings.Contains(string(b), "## What is here") {
		t.Errorf("README.md with a failing provenance hook: %v\n%s", err, b)
	}
	if e, _ := os.ReadFile(tm.path(".errors")); !strings.Contains(string(e), "mfm-store.json is not valid JSON") {
		t.Errorf(".errors lacks the provenance error:\n%s", e)
	}
	// Without the hook: no section.
	tm2 := mountCopy(t, Options{NoAccessLog: true})
	if b, _ := os.ReadFile(tm2.path("README.md")); strings.Contains(string(b), "## Provenance") {
		t.Errorf("README.md without a provenance hook has a provenance section")
	}
}
