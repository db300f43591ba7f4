package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mfm-project/mfm/episodes"
)

// copyForestIndex makes a store holding the committed Luanti run's
// index.jsonl and grid.jsonl (no episode files: enough for queries,
// citations and maps).
func copyForestIndex(t *testing.T) *episodes.Store {
	t.Helper()
	s, err := episodes.Init(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{episodes.IndexFileName, episodes.GridFileName} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "runs", "luanti-forest", "store", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s.Path(f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestMountExplain reads q/<query>/explain through the kernel on the
// committed Luanti run: the query an agent wrote with y last (count 0)
// is explained term by term with what would have matched.
func TestMountExplain(t *testing.T) {
	canMountView(t)
	s := copyForestIndex(t)
	mnt := mountForTest(t, s, filepath.Join(t.TempDir(), "mnt"))
	q := filepath.Join(mnt, "q", "near:-69,185,22")
	ents, err := os.ReadDir(q)
	if err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, e := range ents {
		listed = listed || e.Name() == "explain"
	}
	if !listed {
		t.Errorf("ls q/near:-69,185,22/ does not list explain: %v", ents)
	}
	b, err := os.ReadFile(filepath.Join(q, "explain"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"start → 250  (index rows in life 1, the current life)",
		"near:-69,185,22 → 0  (near: x=-69 y=185 z=22 r=6, 3D distance: the second number is the height y)",
		"the nearest of the 250 before it: ep_000041",
		"written near:-69,22,185 (y second) it would keep 17",
		"count: 0\n",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("explain lacks %q:\n%s", want, b)
		}
	}
	b, err = os.ReadFile(filepath.Join(mnt, "q", "near:-69,22,185", "count"))
	if err != nil || string(b) != "17\n" {
		t.Errorf("the suggested query's count: %q, %v; want 17", b, err)
	}
	b, err = os.ReadFile(filepath.Join(mnt, "q", "tag:damage last:2", "explain"))
	if err != nil || !strings.Contains(string(b), "tag:damage → 4  ") || !strings.Contains(string(b), "last:2 → 2  ") {
		t.Errorf("tag:damage last:2 explain: %v\n%s", err, b)
	}
	if err := os.WriteFile(filepath.Join(q, "explain"), []byte("x"), 0o644); !errors.Is(err, syscall.EROFS) && !errors.Is(err, syscall.EACCES) {
		t.Errorf("writing explain: %v, want EROFS", err)
	}
	readme, err := os.ReadFile(filepath.Join(mnt, "q", "README.md"))
	if err != nil || !strings.Contains(string(readme), "explain") {
		t.Errorf("q/README.md does not name explain: %v", err)
	}
}

// TestMountCheck reads mine/.check through the kernel: a made-up
// citation is reported with its file and line, a procedure without a
// description is named, a fix shows on the next read; the generated
// README names the store directory.
func TestMountCheck(t *testing.T) {
	canMountView(t)
	s := copyForestIndex(t)
	mnt := mountForTest(t, s, filepath.Join(t.TempDir(), "mnt"))
	notes := filepath.Join(mnt, "mine", "notes.md")
	if err := os.WriteFile(notes, []byte("# notes\n\n- the tower at -69,185: ep_000040\n- fell off it: ep_000999, ep_000044\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(mnt, "mine", "procedures"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mnt, "mine", "procedures", "tower.sh"), []byte("#!/bin/sh\nmfmd act 'pillar_up n=13'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(mnt, "mine", ".check"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`mine/notes.md:4: "ep_000999": episode ep_000999 does not exist in life 1`,
		"mine/procedures/tower.sh: procedure tower has no description",
		"3 citation(s), 1 to missing episodes; 1 procedure(s) without a description",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("mine/.check lacks %q:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), "ep_000040") || strings.Contains(string(b), "ep_000044") {
		t.Errorf("mine/.check reports a citation that resolves:\n%s", b)
	}
	if err := os.WriteFile(notes, []byte("- fell off it: ep_000044\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err = os.ReadFile(filepath.Join(mnt, "mine", ".check")); err != nil || strings.Contains(string(b), "ep_000999") || !strings.Contains(string(b), "1 citation(s), 0 to missing") {
		t.Errorf("after the fix, mine/.check: %v\n%s", err, b)
	}
	if err := os.WriteFile(filepath.Join(mnt, "mine", ".check"), []byte("x"), 0o644); err == nil {
		t.Error("mine/.check is writable")
	}
	readme, err := os.ReadFile(filepath.Join(mnt, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"`" + s.Root + "`", "mine/.check"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
}
