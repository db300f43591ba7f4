package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/artifact"
	"github.com/mfm-project/mfm/episodes"
)

// TestMountReadmeProvenance: the README.md of a mounted store that was
// seeded from an artifact names the artifact, its manifest hash and what
// crossed (the hooks mfmd mount uses, a real mount); an unseeded store's
// README has no provenance section.
func TestMountReadmeProvenance(t *testing.T) {
	canMountView(t)
	dir := t.TempDir()
	src, err := episodes.Init(filepath.Join(dir, "src"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(src.Path("mine"), 0o755)
	if err := os.WriteFile(src.Path("mine", "notes.md"), []byte("lava at ep_000001\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tarPath := filepath.Join(dir, "seed-run.tar")
	if _, err := artifact.ExportFile(src, tarPath, artifact.ExportOptions{Include: "mine"}); err != nil {
		t.Fatal(err)
	}
	seeded, prov, err := artifact.Seed(tarPath, filepath.Join(dir, "seeded"))
	if err != nil {
		t.Fatal(err)
	}

	readme := func(store *episodes.Store) string {
		t.Helper()
		mnt, err := os.MkdirTemp(dir, "mnt")
		if err != nil {
			t.Fatal(err)
		}
		mountForTest(t, store, mnt)
		b, err := os.ReadFile(filepath.Join(mnt, "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	got := readme(seeded)
	for _, want := range []string{
		"## Provenance\n",
		"seeded from the frozen artifact `seed-run.tar`",
		"manifest sha256 `" + prov.ManifestSHA256 + "`",
		"declared include: `mine`",
		"mfmd artifact verify seed-run.tar",
		"\n## What is here\n", // the rest of the README is still there
	} {
		if !strings.Contains(got, want) {
			t.Errorf("seeded store's README.md lacks %q:\n%s", want, got)
		}
	}
	if got := readme(src); strings.Contains(got, "## Provenance") || strings.Contains(got, "seeded from") || !strings.Contains(got, "## What is here") {
		t.Errorf("unseeded store's README.md:\n%s", got)
	}
}
