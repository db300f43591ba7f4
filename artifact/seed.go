package artifact

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
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
// and mfm-store.json "from" records the provenance.
//
// dir must not exist or be an empty directory; a store or any other
// content there is refused before anything is written. Seeding is all or
// nothing: the store is built in a temporary directory beside dir
// (".NAME.seed-*") and renamed into place only when it is complete, so a
// failure leaves dir as it was. Extraction stays inside that directory
// (os.Root), creates only regular files and directories, and is bounded by
// the limits.
func Seed(archive, dir string) (*episodes.Store, *Provenance, error) {
	return SeedWith(archive, dir, SeedOptions{})
}

// SeedWith is Seed with options.
func SeedWith(archive, dir string, opt SeedOptions) (*episodes.Store, *Provenance, error) {
	abs, err := filepath.Abs(archive)
	if err != nil {
		return nil, nil, fmt.Errorf("seed: %w", err)
	}
	target, err := seedTarget(dir)
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
	parent := filepath.Dir(target)
	var made []string // parents created here, deepest first: removed again on failure
	for p := parent; ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil || p == filepath.Dir(p) {
			break
		}
		made = append(made, p)
	}
	renamed := false
	defer func() {
		if !renamed {
			for _, p := range made {
				os.Remove(p) // only if still empty
			}
		}
	}()
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, nil, fmt.Errorf("seed: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(target)+".seed-")
	if err != nil {
		return nil, nil, fmt.Errorf("seed: temporary directory beside %s: %w", dir, err)
	}
	defer func() {
		if !renamed {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, nil, fmt.Errorf("seed: %w", err)
	}
	s, err := episodes.Init(tmp)
	if err != nil {
		return nil, nil, fmt.Errorf("seed: %w", err)
	}
	lifeMap := map[string]int{}
	for i, n := range m.Contains.Lives {
		lifeMap[strconv.Itoa(n)] = i + 1
	}
	root, err := os.OpenRoot(tmp)
	if err != nil {
		return nil, nil, fmt.Errorf("seed: %w", err)
	}
	defer root.Close()
	f, err := os.Open(abs)
	if err != nil {
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
	if err == nil && again.ManifestSHA256 != rep.ManifestSHA256 {
		err = fmt.Errorf("%w: manifest sha256 %s, verified as %s", ErrTampered, again.ManifestSHA256, rep.ManifestSHA256)
	}
	if errors.Is(err, ErrTampered) {
		err = fmt.Errorf("the archive changed after it was verified: %w", err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("seed %s from %s: %w (nothing was written to %s)", dir, archive, err, dir)
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
		return nil, nil, err
	}
	s.Format.From = pb
	if err := episodes.WriteFormat(tmp, s.Format); err != nil {
		return nil, nil, fmt.Errorf("seed: %w", err)
	}
	// rename(2) replaces an empty directory; one that gained entries
	// since seedTarget looked is not replaced (ENOTEMPTY, EEXIST).
	// (os.Rename refuses every existing directory.)
	if err := syscall.Rename(tmp, target); err != nil {
		err = &os.LinkError{Op: "rename", Old: tmp, New: target, Err: err}
		if _, terr := seedTarget(target); terr != nil {
			err = terr
		}
		return nil, nil, fmt.Errorf("seed: %w (nothing was written to %s)", err, dir)
	}
	renamed = true
	ns, err := episodes.Open(target)
	if err != nil {
		return nil, nil, fmt.Errorf("seed: %w", err)
	}
	return ns, prov, nil
}

// seedTarget returns the absolute directory Seed renames the new store to
// (dir, or where dir links to), refusing a dir that exists and is not an
// empty directory.
func seedTarget(dir string) (string, error) {
	target, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if fi, err := os.Lstat(target); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		// replace the directory the link names, not the link
		if target, err = filepath.EvalSymlinks(target); err != nil {
			return "", fmt.Errorf("%s: %w", dir, err)
		}
	}
	fi, err := os.Stat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return target, nil
	}
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s exists and is not a directory", dir)
	}
	if _, err := os.Stat(filepath.Join(target, episodes.FormatFileName)); err == nil {
		return "", fmt.Errorf("%s is already a store (%s exists)", dir, episodes.FormatFileName)
	}
	d, err := os.Open(target)
	if err != nil {
		return "", err
	}
	names, err := d.Readdirnames(4)
	d.Close()
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	if len(names) > 0 {
		sort.Strings(names)
		return "", fmt.Errorf("%s is not empty (it holds %s): seed into a new or empty directory", dir, strings.Join(names, ", "))
	}
	return target, nil
}

// destination maps an artifact path to a path in the new store.
// p has passed checkName; anything else is refused, never indexed past
// its parts.
func destination(p string, lifeMap map[string]int) (string, error) {
	if rest, ok := strings.CutPrefix(p, "mine/"); ok && rest != "" {
		return p, nil
	}
	parts := strings.SplitN(p, "/", 3) // lives, life_K, rest
	if len(parts) < 3 || parts[0] != "lives" || parts[2] == "" {
		return "", fmt.Errorf("%w: %s: want mine/… or lives/life_N/…", ErrUnsafe, p)
	}
	k, ok := episodes.ParseLifeName(parts[1])
	n := lifeMap[strconv.Itoa(k)]
	if !ok || n == 0 {
		return "", fmt.Errorf("%w: %s: life not declared in the manifest", ErrUnsafe, p)
	}
	return path.Join(episodes.PreviousDir, episodes.LifeName(n), parts[2]), nil
}

// writeIn writes one file under root, never following or replacing
// anything: directories are created inside root, the file must not exist.
// root is a directory Seed has just made, so a failure here is the file
// system's (no space left, an I/O error), reported as it is.
func writeIn(root *os.Root, name string, fl File, r io.Reader) error {
	if d := path.Dir(name); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", d, bare(err))
		}
	}
	mode := fs.FileMode(0o644)
	if fl.Exec {
		mode = 0o755
	}
	out, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("create %s: %w", name, bare(err))
	}
	n, err := io.Copy(out, io.LimitReader(r, fl.Size+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", name, bare(err))
	}
	if n != fl.Size {
		return fmt.Errorf("%w: %s: %d bytes, manifest says %d", ErrTampered, name, n, fl.Size)
	}
	return nil
}

// bare drops the path of a *fs.PathError (it names the temporary
// directory); the caller names the file.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && !errors.Is(err, ErrTampered) {
		return pe.Err
	}
	return err
}
