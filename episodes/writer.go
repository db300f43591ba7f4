package episodes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Writer is the single writer of a store's records (E, I, grid, log). It
// holds the exclusive writer lock from OpenWriter until Close. Writer is not
// safe for concurrent use.
type Writer struct {
	store  *Store
	lock   *FileLock
	index  *Appender
	grid   *Appender
	log    *Appender
	nextID int64

	nowReady bool // now/ exists
}

// OpenWriter takes the writer lock, finishes an interrupted life change,
// removes temporary episode directories of an interrupted write, truncates
// torn tails of the JSONL files and the log, and returns a Writer.
func (s *Store) OpenWriter() (*Writer, error) {
	lk, err := lockStore(s)
	if err != nil {
		return nil, err
	}
	w := &Writer{store: s, lock: lk}
	if err := w.recover(); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

func (w *Writer) recover() error {
	s := w.store
	if err := s.finishLifeMove(); err != nil {
		return err
	}
	if err := os.MkdirAll(s.Path(EpisodesDir), 0o755); err != nil {
		return fmt.Errorf("open writer: %w", err)
	}
	ents, err := os.ReadDir(s.Path(EpisodesDir))
	if err != nil {
		return fmt.Errorf("open writer: %w", err)
	}
	var maxID int64 = -1
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			if err := os.RemoveAll(s.Path(EpisodesDir, e.Name())); err != nil {
				return fmt.Errorf("open writer: remove interrupted episode %s: %w", e.Name(), err)
			}
			continue
		}
		if n, ok := ParseEpisodeID(e.Name()); ok && n > maxID {
			maxID = n
		}
	}
	// Rows may name ids whose directories are missing (paper exports):
	// never reuse an id an index row has used either.
	_, err = ReadRows(s.Path(IndexFileName), 0, func(r Row, _ Line) error {
		if n, ok := ParseEpisodeID(r.ID); ok && n > maxID {
			maxID = n
		}
		return nil
	}, nil)
	if err != nil {
		return err
	}
	w.nextID = maxID + 1
	for _, p := range []struct {
		dst  **Appender
		name string
	}{{&w.index, IndexFileName}, {&w.grid, GridFileName}, {&w.log, LogFileName}} {
		a, err := OpenAppender(s.Path(p.name))
		if err != nil {
			return err
		}
		*p.dst = a
	}
	return nil
}

// Store returns the store being written.
func (w *Writer) Store() *Store { return w.store }

// NextID returns the id the next episode will get (ep_NNNNNN, numbered on
// from the highest id on disk or in the index).
func (w *Writer) NextID() string { return EpisodeID(w.nextID) }

// Episode is everything written for one episode.
type Episode struct {
	// Files maps slash-separated paths relative to the episode directory
	// (e.g. "action.json", "observation/image.png", "frames/000012.png")
	// to their content.
	Files map[string][]byte
	// Row is the index row (one JSON object, no newline). It is appended
	// last: the row is the commit point of the episode.
	Row []byte
	// Grid rows and Log text are appended before the row.
	Grid [][]byte
	Log  []byte
}

// WriteEpisode writes episode ep under id (which must be NextID()): its
// files into episodes/.tmp-<id>-*, fsynced, renamed to episodes/<id>, then
// its grid rows and log text, then its index row, then fsync of the three
// files. After a crash at any point the store holds either the whole
// episode with its row, or no row for it.
func (w *Writer) WriteEpisode(id string, ep Episode) error {
	if w.index == nil {
		return errors.New("write episode: writer is closed")
	}
	if id != w.NextID() {
		return fmt.Errorf("write episode %s: next id is %s", id, w.NextID())
	}
	if len(ep.Row) == 0 {
		return fmt.Errorf("write episode %s: no index row", id)
	}
	epDir := w.store.Path(EpisodesDir)
	tmp, err := os.MkdirTemp(epDir, ".tmp-"+id+"-")
	if err != nil {
		return fmt.Errorf("write episode %s: %w", id, err)
	}
	// MkdirTemp creates 0700; an episode is readable by every user, as
	// its files are (0644) and the mount serves it to other users.
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("write episode %s: %w", id, err)
	}
	if err := writeTree(tmp, ep.Files); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("write episode %s: %w", id, err)
	}
	final := filepath.Join(epDir, id)
	if err := os.Rename(tmp, final); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("write episode %s: %w", id, err)
	}
	if err := syncDir(epDir); err != nil {
		return fmt.Errorf("write episode %s: %w", id, err)
	}
	w.nextID++
	for _, g := range ep.Grid {
		if err := w.grid.Append(g); err != nil {
			return fmt.Errorf("write episode %s: %w", id, err)
		}
	}
	if err := w.log.AppendLines(ep.Log); err != nil {
		return fmt.Errorf("write episode %s: %w", id, err)
	}
	if err := w.index.Append(ep.Row); err != nil {
		return fmt.Errorf("write episode %s: %w", id, err)
	}
	for _, a := range []*Appender{w.grid, w.log, w.index} {
		if err := a.Sync(); err != nil {
			return fmt.Errorf("write episode %s: %w", id, err)
		}
	}
	return nil
}

// AppendLog appends text (lines) to logs.txt outside an episode.
func (w *Writer) AppendLog(text []byte) error { return w.log.AppendLines(text) }

// AppendGrid appends one grid row outside an episode.
func (w *Writer) AppendGrid(row []byte) error { return w.grid.Append(row) }

// WriteNow atomically replaces now/<name> (state.json, frame.png): the
// latest state as the harness last wrote it. now/ is not part of the
// record and is overwritten freely, so it is replaced by rename (readers
// see the old or the new file, never a partial one) without fsync: after
// a crash now/ may be older than the record.
func (w *Writer) WriteNow(name string, data []byte) error {
	if name == "" || strings.ContainsAny(name, "/\\") || name == "." || name == ".." {
		return fmt.Errorf("write now/%s: invalid name", name)
	}
	dir := w.store.Path(NowDir)
	if !w.nowReady {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("write now/%s: %w", name, err)
		}
		w.nowReady = true
	}
	path := filepath.Join(dir, name)
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write now/%s: %w", name, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write now/%s: %w", name, err)
	}
	return nil
}

// RemoveNow removes now/<name> if it is there (a recorder whose latest
// state is gone: an aborted first episode, a new life).
func (w *Writer) RemoveNow(name string) error {
	if name == "" || strings.ContainsAny(name, "/\\") || name == "." || name == ".." {
		return fmt.Errorf("remove now/%s: invalid name", name)
	}
	if err := os.Remove(w.store.Path(NowDir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove now/%s: %w", name, err)
	}
	return nil
}

// Close releases the files and the writer lock.
func (w *Writer) Close() error {
	var errs []error
	for _, a := range []*Appender{w.index, w.grid, w.log} {
		if a != nil {
			errs = append(errs, a.Close())
		}
	}
	w.index, w.grid, w.log = nil, nil, nil
	errs = append(errs, w.lock.Unlock())
	return errors.Join(errs...)
}

func writeTree(root string, files map[string][]byte) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	dirs := map[string]bool{root: true}
	for _, n := range names {
		if !fs.ValidPath(n) || n == "." {
			return fmt.Errorf("invalid episode file name %q", n)
		}
		p := filepath.Join(root, filepath.FromSlash(n))
		d := filepath.Dir(p)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		dirs[d] = true
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		if _, err := f.Write(files[n]); err != nil {
			f.Close()
			return err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	for d := range dirs {
		if err := syncDir(d); err != nil {
			return err
		}
	}
	return nil
}
