package artifact

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mfm-project/mfm/episodes"
)

// Provenance is what a seeded store records in mfm-store.json "from".
type Provenance struct {
	Artifact       string         `json:"artifact"`        // the archive's path at import
	ManifestSHA256 string         `json:"manifest_sha256"` // names the artifact
	SourceStore    string         `json:"source_store"`    // the exporting store's id
	SourceRoot     string         `json:"source_root"`
	Include        string         `json:"include"`
	Exported       string         `json:"exported"` // the manifest time
	Imported       string         `json:"imported"`
	Files          int            `json:"files"`
	Bytes          int64          `json:"bytes"`
	MineFiles      int            `json:"mine_files"`
	Episodes       int            `json:"episodes"`
	Lives          map[string]int `json:"lives,omitempty"` // source life -> previous/life_N here
	// The source store at export: lives, episodes and steps recorded.
	SourceLives    int   `json:"source_lives"`
	SourceEpisodes int   `json:"source_episodes"`
	SourceSteps    int64 `json:"source_steps"`
}

// SeedOptions configure Seed.
type SeedOptions struct {
	Limits Limits
	Now    func() time.Time
}

// Seed creates a fresh store in dir from the artifact at archive: the
// artifact is verified first (a mismatch or an unsafe entry refuses it),
// then mine/ is unpacked into mine/, included episodes of source life K
// become previous/life_N (N = 1.. in source order) with their index rows,
// and mfm-store.json "from" records the provenance. dir must not hold a
// store. Extraction stays inside dir (os.Root), creates only regular
// files and directories, and is bounded by the limits.
func Seed(archive, dir string) (*episodes.Store, *Provenance, error) {
	return SeedWith(archive, dir, SeedOptions{})
}

// SeedWith is Seed with options.
func SeedWith(archive, dir string, opt SeedOptions) (*episodes.Store, *Provenance, error) {
	abs, err := filepath.Abs(archive)
	if err != nil {
		return nil, nil, fmt.Errorf("seed: %w", err)
	}
	rep, err := Verify(abs, opt.Limits)
	if err != nil {
		return nil, nil, fmt.Errorf("seed: %w", err)
	}
	if err := rep.Err(); err != nil {
		return nil, nil, fmt.Errorf("seed: refusing %s: %w", archive, err)
	}
	m := rep.Manifest
	_, statErr := os.Stat(dir)
	existed := statErr == nil
	s, err := episodes.Init(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("seed: %w", err)
	}
	cleanup := func() {
		if !existed {
			os.RemoveAll(s.Root)
		}
	}
	lifeMap := map[string]int{}
	for i, n := range m.Contains.Lives {
		lifeMap[strconv.Itoa(n)] = i + 1
	}
	root, err := os.OpenRoot(s.Root)
	if err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("seed: %w", err)
	}
	defer root.Close()
	f, err := os.Open(abs)
	if err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("seed: %w", err)
	}
	defer f.Close()
	again := &Report{}
	err = walk(f, opt.Limits, again, func(fl File, r io.Reader) error {
		dst, err := destination(fl.Path, lifeMap)
		if err != nil {
			return err
		}
		return writeIn(root, dst, fl, r)
	})
	if err == nil {
		err = again.Err()
	}
	if err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("seed %s from %s: %w", dir, archive, err)
	}
	now := time.Now
	if opt.Now != nil {
		now = opt.Now
	}
	prov := &Provenance{
		Artifact: abs, ManifestSHA256: rep.ManifestSHA256, SourceStore: m.Source.StoreID, SourceRoot: m.Source.Root,
		Include: m.Include, Exported: m.Created, Imported: now().UTC().Format(time.RFC3339),
		Files: len(m.Files), Bytes: m.Contains.Bytes, MineFiles: m.Contains.Mine, Episodes: m.Contains.Episodes,
		SourceLives: m.Source.Lives, SourceEpisodes: m.Source.Episodes, SourceSteps: m.Source.Steps,
	}
	if len(lifeMap) > 0 {
		prov.Lives = lifeMap
	}
	pb, err := json.Marshal(prov)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	s.Format.From = pb
	if err := episodes.WriteFormat(s.Root, s.Format); err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("seed: %w", err)
	}
	return s, prov, nil
}

// destination maps an artifact path to a path in the new store.
func destination(p string, lifeMap map[string]int) (string, error) {
	if strings.HasPrefix(p, "mine/") {
		return p, nil
	}
	parts := strings.SplitN(p, "/", 3) // lives, life_K, rest
	k, ok := episodes.ParseLifeName(parts[1])
	n := lifeMap[strconv.Itoa(k)]
	if !ok || n == 0 || len(parts) < 3 {
		return "", fmt.Errorf("%w: %s: life not declared in the manifest", ErrUnsafe, p)
	}
	return path.Join(episodes.PreviousDir, episodes.LifeName(n), parts[2]), nil
}

// writeIn writes one file under root, never following or replacing
// anything: directories are created inside root, the file must not exist.
func writeIn(root *os.Root, name string, fl File, r io.Reader) error {
	if d := path.Dir(name); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("%w: create %s: %v", ErrUnsafe, d, err)
		}
	}
	mode := fs.FileMode(0o644)
	if fl.Exec {
		mode = 0o755
	}
	out, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("%w: create %s: %v", ErrUnsafe, name, err)
	}
	n, err := io.Copy(out, io.LimitReader(r, fl.Size+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if n != fl.Size {
		return fmt.Errorf("%w: %s: %d bytes, manifest says %d", ErrTampered, name, n, fl.Size)
	}
	return nil
}
