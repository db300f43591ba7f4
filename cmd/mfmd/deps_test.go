package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoExamplesInBinary: the product binary imports nothing under
// examples/ (the game adapter, the brief and the runs it uses live in
// packages of their own).
func TestNoExamplesInBinary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/mfm-project/mfm/examples/") {
			t.Errorf("mfmd imports %s", p)
		}
	}
}
