package episodes

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Names of the files and directories of a store.
const (
	FormatFileName = "mfm-store.json"
	IndexFileName  = "index.jsonl"
	GridFileName   = "grid.jsonl"
	LogFileName    = "logs.txt"
	EpisodesDir    = "episodes"
	PreviousDir    = "previous"
	MineDir        = "mine"
	NowDir         = "now"
	MetaDir        = ".mfm"
)

// FormatVersion is the store format version this package writes.
const FormatVersion = 1

// Format is the content of mfm-store.json.
type Format struct {
	Format  string `json:"format"`  // always "mfm-store"
	Version int    `json:"version"` // FormatVersion
	ID      string `json:"id"`      // random store id, kept for provenance
	Created string `json:"created"` // RFC 3339
	// From records the artifact a store was seeded from, if any.
	From json.RawMessage `json:"from,omitempty"`
	// Axes declare which way north is and which block a position falls
	// in; nil is the paper's (Minecraft's) axes.
	Axes *Axes `json:"axes,omitempty"`
}

// Store is an opened store directory. It is cheap and safe for concurrent
// use: it holds no file descriptors; writing goes through a Writer.
type Store struct {
	Root   string // absolute path of the store directory
	Format Format // zero Version for a paper-harness store without mfm-store.json
}

// Init creates a new store in dir (which may exist but must not already
// hold a store) and returns it opened.
func Init(dir string) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("init store %s: %w", dir, err)
	}
	if _, err := os.Stat(filepath.Join(abs, FormatFileName)); err == nil {
		return nil, fmt.Errorf("init store %s: already a store (%s exists)", dir, FormatFileName)
	}
	if _, err := os.Stat(filepath.Join(abs, IndexFileName)); err == nil {
		return nil, fmt.Errorf("init store %s: already holds %s", dir, IndexFileName)
	}
	for _, d := range []string{abs, filepath.Join(abs, EpisodesDir), filepath.Join(abs, MineDir), filepath.Join(abs, MetaDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("init store %s: %w", dir, err)
		}
	}
	for _, f := range []string{IndexFileName, GridFileName, LogFileName} {
		fh, err := os.OpenFile(filepath.Join(abs, f), os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, fmt.Errorf("init store %s: %w", dir, err)
		}
		fh.Close()
	}
	id := make([]byte, 8)
	if _, err := rand.Read(id); err != nil {
		return nil, fmt.Errorf("init store %s: store id: %w", dir, err)
	}
	f := Format{Format: "mfm-store", Version: FormatVersion, ID: hex.EncodeToString(id), Created: time.Now().UTC().Format(time.RFC3339)}
	if err := WriteFormat(abs, f); err != nil {
		return nil, fmt.Errorf("init store %s: %w", dir, err)
	}
	return &Store{Root: abs, Format: f}, nil
}

// WriteFormat atomically replaces the format marker of the store at root.
func WriteFormat(root string, f Format) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(root, FormatFileName), append(b, '\n'), 0o644)
}

// Open opens the store in dir. A directory with index.jsonl or episodes/
// but no mfm-store.json is a paper-harness store and opens with
// Format.Version 0; a newer format version than this package knows is an
// error.
func Open(dir string) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("open store %s: not a directory", dir)
	}
	s := &Store{Root: abs}
	b, err := os.ReadFile(filepath.Join(abs, FormatFileName))
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &s.Format); err != nil {
			return nil, fmt.Errorf("open store %s: %s is not valid JSON: %w", dir, FormatFileName, err)
		}
		if s.Format.Format != "mfm-store" {
			return nil, fmt.Errorf("open store %s: %s: format is %q, want \"mfm-store\"", dir, FormatFileName, s.Format.Format)
		}
		if s.Format.Axes != nil {
			if err := s.Format.Axes.Check(); err != nil {
				return nil, fmt.Errorf("open store %s: %s: %w", dir, FormatFileName, err)
			}
		}
		if s.Format.Version > FormatVersion {
			return nil, fmt.Errorf("open store %s: format version %d is newer than this mfmd (%d): upgrade mfmd", dir, s.Format.Version, FormatVersion)
		}
	case errors.Is(err, fs.ErrNotExist):
		_, e1 := os.Stat(filepath.Join(abs, IndexFileName))
		_, e2 := os.Stat(filepath.Join(abs, EpisodesDir))
		if e1 != nil && e2 != nil {
			return nil, fmt.Errorf("open store %s: not a store (no %s, %s or %s/; create one with mfmd init)", dir, FormatFileName, IndexFileName, EpisodesDir)
		}
	default:
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	return s, nil
}

// Path joins elem onto the store root.
func (s *Store) Path(elem ...string) string {
	return filepath.Join(append([]string{s.Root}, elem...)...)
}

// MetaPath returns a path under the store's derived-data directory .mfm/,
// creating .mfm/ if needed.
func (s *Store) MetaPath(elem ...string) (string, error) {
	dir := s.Path(MetaDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	return filepath.Join(append([]string{dir}, elem...)...), nil
}

// Life is one life of a store: the current one or a frozen previous one.
type Life struct {
	N       int    // 1-based life number
	Root    string // directory holding this life's logs.txt, index.jsonl, grid.jsonl, episodes/
	Current bool
}

// IndexPath is the life's index.jsonl.
func (l Life) IndexPath() string { return filepath.Join(l.Root, IndexFileName) }

// GridPath is the life's grid.jsonl.
func (l Life) GridPath() string { return filepath.Join(l.Root, GridFileName) }

// LogPath is the life's logs.txt.
func (l Life) LogPath() string { return filepath.Join(l.Root, LogFileName) }

// Lives lists the previous lives (previous/life_N, by N) followed by the
// current life, numbered one past the highest previous life.
func (s *Store) Lives() ([]Life, error) {
	prev, err := s.PreviousLives()
	if err != nil {
		return nil, err
	}
	cur := 1
	if len(prev) > 0 {
		cur = prev[len(prev)-1].N + 1
	}
	return append(prev, Life{N: cur, Root: s.Root, Current: true}), nil
}

// CurrentLife returns the current life.
func (s *Store) CurrentLife() (Life, error) {
	l, err := s.Lives()
	if err != nil {
		return Life{}, err
	}
	return l[len(l)-1], nil
}

// PreviousLives lists previous/life_N directories in order of N.
func (s *Store) PreviousLives() ([]Life, error) {
	ents, err := os.ReadDir(s.Path(PreviousDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list lives: %w", err)
	}
	var lives []Life
	for _, e := range ents {
		n, ok := ParseLifeName(e.Name())
		if !ok || !e.IsDir() {
			continue
		}
		lives = append(lives, Life{N: n, Root: s.Path(PreviousDir, e.Name())})
	}
	sort.Slice(lives, func(i, j int) bool { return lives[i].N < lives[j].N })
	return lives, nil
}

// LifeName is the directory name of life n under previous/.
func LifeName(n int) string { return "life_" + strconv.Itoa(n) }

// ParseLifeName parses "life_N" (N ≥ 1).
func ParseLifeName(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "life_")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 1 || strconv.Itoa(n) != rest {
		return 0, false
	}
	return n, true
}

// EpisodeID formats episode number n as the paper does: ep_%06d. Numbers of
// a million and more simply get more digits.
func EpisodeID(n int64) string { return fmt.Sprintf("ep_%06d", n) }

// ParseEpisodeID parses "ep_NNNNNN" (at least six digits).
func ParseEpisodeID(id string) (int64, bool) {
	rest, ok := strings.CutPrefix(id, "ep_")
	if !ok || len(rest) < 6 {
		return 0, false
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || n < 0 || EpisodeID(n) != id {
		return 0, false
	}
	return n, true
}

// EpisodeDir returns the directory of episode id in life l.
func (l Life) EpisodeDir(id string) string { return filepath.Join(l.Root, EpisodesDir, id) }

// WriteFileAtomic writes data to path through a temporary file in the same
// directory, fsyncs it, renames it over path and fsyncs the directory.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after the rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: fsync: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}
