package episodes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// lifeRecords are the entries that move to previous/life_N/ on a new life.
var lifeRecords = []string{LogFileName, IndexFileName, GridFileName, EpisodesDir, RunFileName}

const lifeTmpPrefix = ".tmp-"

// NewLife ends the current life: its logs.txt, index.jsonl, grid.jsonl,
// episodes/ and a play session's run.json (when there is one) move, unchanged, to previous/life_N/ (N = the current life's
// number), fresh empty ones take their place, and mine/ stays. The moves
// are renames into previous/.tmp-life_N, then one rename to life_N; an
// interrupted change is finished by the next OpenWriter. It returns the
// frozen life.
func (w *Writer) NewLife() (Life, error) {
	s := w.store
	cur, err := s.CurrentLife()
	if err != nil {
		return Life{}, err
	}
	for _, a := range []*Appender{w.index, w.grid, w.log} {
		if err := a.Sync(); err != nil {
			return Life{}, err
		}
		a.Close()
	}
	w.index, w.grid, w.log = nil, nil, nil
	if err := os.MkdirAll(s.Path(PreviousDir, lifeTmpPrefix+LifeName(cur.N)), 0o755); err != nil {
		return Life{}, fmt.Errorf("new life: %w", err)
	}
	if err := s.finishLifeMove(); err != nil {
		return Life{}, err
	}
	if err := w.recover(); err != nil {
		return Life{}, err
	}
	return Life{N: cur.N, Root: s.Path(PreviousDir, LifeName(cur.N))}, nil
}

// finishLifeMove completes a life change that previous/.tmp-life_N marks.
func (s *Store) finishLifeMove() error {
	ents, err := os.ReadDir(s.Path(PreviousDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("new life: %w", err)
	}
	for _, e := range ents {
		name := e.Name()
		if len(name) <= len(lifeTmpPrefix) || name[:len(lifeTmpPrefix)] != lifeTmpPrefix {
			continue
		}
		n, ok := ParseLifeName(name[len(lifeTmpPrefix):])
		if !ok {
			continue
		}
		tmp := s.Path(PreviousDir, name)
		for _, rec := range lifeRecords {
			src := s.Path(rec)
			if _, err := os.Lstat(src); errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if _, err := os.Lstat(filepath.Join(tmp, rec)); err == nil {
				continue // moved before the interruption; src is the new life's
			}
			if err := os.Rename(src, filepath.Join(tmp, rec)); err != nil {
				return fmt.Errorf("new life: move %s: %w", rec, err)
			}
		}
		if err := syncDir(tmp); err != nil {
			return err
		}
		if err := os.Rename(tmp, s.Path(PreviousDir, LifeName(n))); err != nil {
			return fmt.Errorf("new life: %w", err)
		}
		if err := syncDir(s.Path(PreviousDir)); err != nil {
			return err
		}
		if err := syncDir(s.Root); err != nil {
			return err
		}
	}
	return nil
}
