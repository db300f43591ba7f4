package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestCatalogNoSymlinkEscape: a script in mine/procedures (or the
// procedures directory itself) linking to a file outside mine/ is refused:
// neither the catalog nor a run reads the target, so its first comment
// line and its sha256 stay private; a link that stays inside mine/ works.
func TestCatalogNoSymlinkEscape(t *testing.T) {
	secret := "#!/bin/sh\n# SECRET-FIRST-LINE\necho '{\"actions\": []}'\n"
	outside := filepath.Join(t.TempDir(), "root-only.sh")
	if err := os.WriteFile(outside, []byte(secret), 0o700); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(secret))
	secretSum := hex.EncodeToString(sum[:])

	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, mine string)
	}{
		{"script links out", func(t *testing.T, mine string) {
			must(t, os.MkdirAll(filepath.Join(mine, "procedures"), 0o755))
			must(t, os.Symlink(outside, filepath.Join(mine, "procedures", "leak.sh")))
		}},
		{"script links out relatively", func(t *testing.T, mine string) {
			must(t, os.MkdirAll(filepath.Join(mine, "procedures"), 0o755))
			rel, err := filepath.Rel(filepath.Join(mine, "procedures"), outside)
			must(t, err)
			must(t, os.Symlink(rel, filepath.Join(mine, "procedures", "leak.sh")))
		}},
		{"procedures dir links out", func(t *testing.T, mine string) {
			dir := filepath.Join(t.TempDir(), "elsewhere")
			must(t, os.MkdirAll(dir, 0o755))
			must(t, os.Symlink(outside, filepath.Join(dir, "leak.sh")))
			must(t, os.Symlink(dir, filepath.Join(mine, "procedures")))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			mine := s.Path("mine")
			tc.setup(t, mine)
			b, err := CatalogJSON(s)
			if err != nil && !strings.Contains(tc.name, "dir") {
				t.Fatal(err)
			}
			if strings.Contains(string(b), "SECRET-FIRST-LINE") || strings.Contains(string(b), secretSum) {
				t.Fatalf("the catalog leaks the file outside mine/:\n%s", b)
			}
			if err == nil && !strings.Contains(string(b), `"error"`) && strings.Contains(string(b), "leak") {
				t.Errorf("the escaping script is listed without an error:\n%s", b)
			}
			r := &Runner{Dir: filepath.Join(mine, "procedures"), Timeout: testTimeout}
			if _, err := r.Run(context.Background(), "leak", nil, []byte("{}")); err == nil {
				t.Error("a script linking out of mine/ was run")
			}
			if _, err := LoadProcedure(filepath.Join(mine, "procedures", "leak.sh"), KindProcedure); err == nil {
				t.Error("LoadProcedure followed a link out of mine/")
			}
		})
	}

	// a link inside mine/ is followed
	s := newStore(t)
	mine := s.Path("mine")
	must(t, os.MkdirAll(filepath.Join(mine, "procedures"), 0o755))
	must(t, os.MkdirAll(filepath.Join(mine, "lib"), 0o755))
	must(t, os.WriteFile(filepath.Join(mine, "lib", "ok.sh"), []byte("# ok: inside\necho '{\"actions\": []}'\n"), 0o644))
	must(t, os.Symlink("../lib/ok.sh", filepath.Join(mine, "procedures", "ok.sh")))
	entries, err := Catalog(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Error != "" || entries[0].Description != "inside" {
		t.Errorf("a link inside mine/: %+v", entries)
	}
}

// TestCatalogLargeScriptCheap: the header comes from the first 64 KiB and
// the hash is streamed, so a 1 GiB sparse script costs a bounded amount of
// memory and its header and size are still right.
func TestCatalogLargeScriptCheap(t *testing.T) {
	s := newStore(t)
	dir := s.Path("mine", "procedures")
	must(t, os.MkdirAll(dir, 0o755))
	path := filepath.Join(dir, "huge.sh")
	must(t, os.WriteFile(path, []byte("# huge: a sparse gigabyte\n# see ep_000001\n"), 0o644))
	const size = 1 << 30
	must(t, os.Truncate(path, size))

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	entries, err := Catalog(s)
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Description != "a sparse gigabyte" || entries[0].Error != "" {
		t.Fatalf("catalog of the sparse script: %+v", entries)
	}
	const budget = 16 << 20
	if got := after.TotalAlloc - before.TotalAlloc; got > budget {
		t.Errorf("cataloguing a 1 GiB script allocated %d bytes, more than %d", got, budget)
	}
	if elapsed > time.Minute {
		t.Errorf("cataloguing a 1 GiB script took %s", elapsed)
	}
	p, err := LoadProcedure(path, KindProcedure)
	if err != nil {
		t.Fatal(err)
	}
	if p.Size != size {
		t.Errorf("size %d, want %d", p.Size, size)
	}
}

// TestLoadProcedureHashWhole: the streamed hash covers the whole file,
// past the header.
func TestLoadProcedureHashWhole(t *testing.T) {
	body := "# long: over the header size\n" + strings.Repeat("echo x\n", 3*maxHeader/7)
	dir := procDir(t, map[string]string{"long.sh": body})
	p, err := LoadProcedure(filepath.Join(dir, "long.sh"), KindProcedure)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(body))
	if p.SHA256 != hex.EncodeToString(sum[:]) || p.Description != "over the header size" {
		t.Errorf("sha256 %s description %q", p.SHA256, p.Description)
	}
	if _, err := LoadProcedure(filepath.Join(dir, "missing.sh"), KindProcedure); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing script: %v", err)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
