package artifact

import (
	"archive/tar"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// mineTar is an artifact of three mine/ files (notes.md first).
func mineTar(t testing.TB, last string) []byte {
	t.Helper()
	reg := func(name string) *tar.Header { return &tar.Header{Name: name, Mode: 0o644, Typeflag: tar.TypeReg} }
	names := []string{"mine/notes.md", "mine/procedures/dig.sh", "mine/reflexes/low.sh"}
	bodies := []string{"# notes\n", "#!/bin/sh\necho '{\"actions\": []}'\n", last}
	var hs []*tar.Header
	var files []File
	for i, n := range names {
		hs = append(hs, reg(n))
		files = append(files, fileOf(n, bodies[i]))
	}
	// the manifest always lists the good content of the last file
	files[2] = fileOf(names[2], "#!/bin/sh\n# low: all good\n")
	b, err := os.ReadFile(evilTar(t, hs, bodies, files))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// entries lists a directory's names ("" when it does not exist).
func entries(t testing.TB, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "<absent>"
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}

// TestSeedTarget: an existing non-empty directory is refused before
// anything is written, with an error that says why; an empty one is
// seeded.
func TestSeedTarget(t *testing.T) {
	good := filepath.Join(t.TempDir(), "a.tar")
	if err := os.WriteFile(good, mineTar(t, "#!/bin/sh\n# low: all good\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	dir := filepath.Join(t.TempDir(), "st")
	os.MkdirAll(filepath.Join(dir, "mine"), 0o755)
	os.WriteFile(filepath.Join(dir, "mine", "notes.md"), []byte("mine, not the artifact's\n"), 0o644)
	_, _, err := Seed(good, dir)
	if err == nil || errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "is not empty (it holds mine): seed into a new or empty directory") {
		t.Fatalf("seed into a non-empty dir: %v", err)
	}
	if got := entries(t, dir); got != "mine" {
		t.Errorf("the refused dir now holds %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "mine", "notes.md")); string(b) != "mine, not the artifact's\n" {
		t.Errorf("notes.md changed: %q", b)
	}
	if got := entries(t, filepath.Dir(dir)); got != "st" {
		t.Errorf("the parent holds %q", got)
	}
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	if _, _, err := Seed(good, file); err == nil || !strings.Contains(err.Error(), "exists and is not a directory") {
		t.Errorf("seed onto a file: %v", err)
	}

	empty := filepath.Join(t.TempDir(), "empty")
	os.Mkdir(empty, 0o755)
	s, prov, err := Seed(good, empty)
	if err != nil {
		t.Fatal(err)
	}
	if s.Root != empty || prov.Files != 3 {
		t.Errorf("root %s, %d files", s.Root, prov.Files)
	}
	if b, err := os.ReadFile(filepath.Join(empty, "mine", "procedures", "dig.sh")); err != nil || !strings.HasPrefix(string(b), "#!/bin/sh") {
		t.Errorf("dig.sh: %q %v", b, err)
	}
	if fi, err := os.Stat(empty); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("store dir mode %v %v", fi.Mode(), err)
	}
	if got := entries(t, filepath.Dir(empty)); got != "empty" {
		t.Errorf("the parent holds %q (a temporary directory left?)", got)
	}
	if _, _, err := Seed(good, empty); err == nil || !strings.Contains(err.Error(), "already a store (mfm-store.json exists)") {
		t.Errorf("seed over a store: %v", err)
	}
}

// TestSeedAllOrNothing: extraction runs out of space (a 64 KiB tmpfs)
// after writing one file. Nothing may be left: not in an existing empty
// directory, not a new directory, not the parents Seed created, no
// temporary directory; the error names the real cause.
func TestSeedAllOrNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI: this test must run (as root) to mount a small tmpfs")
		}
		t.Skip("mounting a small tmpfs needs root")
	}
	reg := func(name string) *tar.Header { return &tar.Header{Name: name, Mode: 0o644, Typeflag: tar.TypeReg} }
	big := strings.Repeat("stone ", 50000) // 300 KB: more than the tmpfs holds
	archive := evilTar(t, []*tar.Header{reg("mine/a.md"), reg("mine/z.txt")}, []string{"# notes\n", big},
		[]File{fileOf("mine/a.md", "# notes\n"), fileOf("mine/z.txt", big)})
	for _, c := range []struct{ name, dst string }{
		{"existing empty dir", "empty"},
		{"new dir", "new"},
		{"new parents", "a/b/new"},
	} {
		t.Run(c.name, func(t *testing.T) {
			work := t.TempDir()
			if err := syscall.Mount("tmpfs", work, "tmpfs", 0, "size=64k"); err != nil {
				t.Fatalf("mount tmpfs: %v", err)
			}
			t.Cleanup(func() { syscall.Unmount(work, syscall.MNT_DETACH) })
			dst := filepath.Join(work, c.dst)
			if c.dst == "empty" {
				os.Mkdir(dst, 0o755)
			}
			_, _, err := Seed(archive, dst)
			if err == nil || errors.Is(err, ErrUnsafe) || !errors.Is(err, syscall.ENOSPC) ||
				!strings.Contains(err.Error(), "write mine/z.txt") || !strings.Contains(err.Error(), "nothing was written to "+dst) {
				t.Fatalf("err = %v", err)
			}
			if strings.Contains(err.Error(), ".seed-") {
				t.Errorf("the error names the temporary directory: %v", err)
			}
			want := ""
			if c.dst == "empty" {
				want = "empty"
				if got := entries(t, dst); got != "" {
					t.Errorf("the empty dir now holds %q", got)
				}
			}
			if got := entries(t, work); got != want {
				t.Errorf("%s holds %q after the failure, want %q", work, got, want)
			}
		})
	}
}

// TestSeedSymlinkTarget: a link to an empty directory is seeded through:
// the directory becomes the store and the link stays a link.
func TestSeedSymlinkTarget(t *testing.T) {
	good := filepath.Join(t.TempDir(), "a.tar")
	os.WriteFile(good, mineTar(t, "#!/bin/sh\n# low: all good\n"), 0o644)
	base := t.TempDir()
	real := filepath.Join(base, "real")
	os.Mkdir(real, 0o755)
	link := filepath.Join(base, "link")
	if err := os.Symlink("real", link); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Seed(good, link); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(real, "mfm-store.json")); err != nil {
		t.Errorf("the linked directory is not the store: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(link, "mine", "notes.md")); !bytes.Equal(b, []byte("# notes\n")) {
		t.Errorf("notes.md through the link: %q", b)
	}
}
