package episodes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// Names of the files of now/.
const (
	NowStateName = "state.json"
	NowFrameName = "frame.png"
)

// LatestState is the latest recorded state of a store and where it was
// found.
type LatestState struct {
	// JSON is the state object as stored (state.json's form).
	JSON []byte
	// File is the file it was read from; Field is "end_state" when the
	// state is that field of File (an outcome.json), else "".
	File  string
	Field string
	// Source names it for messages, relative to the store:
	// "now/state.json", "episodes/ep_000005/outcome.json end_state".
	Source string
	// Row is the episode's index row and Life its life; nil and zero for
	// now/state.json.
	Row  *Row
	Life Life
}

// StateFile is the latest state as a state.json file holds it: the
// file's bytes when the state is a whole file, else the end_state object
// written in state.json's form (MarshalPyIndent, numbers as recorded), the
// bytes the recorder writes as the next episode's state/state.json.
func (l *LatestState) StateFile() ([]byte, error) {
	if l.Field == "" {
		return l.JSON, nil
	}
	d := json.NewDecoder(bytes.NewReader(l.JSON))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("%s: %w", l.Source, err)
	}
	b, err := MarshalPyIndent(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.Source, err)
	}
	return b, nil
}

// FindLatestState returns the latest recorded state of s. The rule:
//
//  1. now/state.json, when the harness wrote one: it is replaced at every
//     step, so it is the newest state there is (it outlives a life change).
//  2. Else the last episode, searching the current life's index.jsonl from
//     its end, then each previous life's from the newest: its end state
//     (outcome.json end_state, which MFM's recorder writes and resumes
//     from), else its start state (state/state.json: the paper's harness
//     records no end state).
//  3. An episode with neither file readable as a state (a partial export)
//     is skipped for the one before it; a malformed file is skipped too.
//
// With no state anywhere the error wraps fs.ErrNotExist.
func FindLatestState(s *Store) (*LatestState, error) {
	now := s.Path(NowDir, NowStateName)
	if b, err := os.ReadFile(now); err == nil {
		return &LatestState{JSON: b, File: now, Source: NowDir + "/" + NowStateName}, nil
	}
	var found *LatestState
	err := eachRowBackwards(s, func(l Life, r *Row) bool {
		dir := l.RowDir(r)
		if o, err := ReadOutcome(dir); err == nil && o.EndState != nil {
			found = &LatestState{JSON: o.EndState.Raw, File: filepath.Join(dir, OutcomeFileName), Field: "end_state", Row: r, Life: l}
			found.Source = s.rel(found.File) + " end_state"
			return false
		}
		if st, err := ReadState(dir); err == nil {
			found = &LatestState{JSON: st.Raw, File: filepath.Join(dir, filepath.FromSlash(StateFileName)), Row: r, Life: l}
			found.Source = s.rel(found.File)
			return false
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("latest state of %s: %w", s.Root, err)
	}
	if found == nil {
		return nil, fmt.Errorf("latest state of %s: no now/%s and no episode with a state: %w", s.Root, NowStateName, fs.ErrNotExist)
	}
	return found, nil
}

// LatestFramePath returns the file of the latest frame of s: now/frame.png
// when the harness wrote one, else the observation image of the last
// episode (the current life's, else the newest previous life's), the frame
// the agent saw when it chose
// that episode's action. The file must be inside the store: a name with
// ".." or a symlink leading out of the store is an error, not followed.
// Only that episode is looked at: frames
// are optional (the paper's exports carry none), and searching further
// back would read a whole index to find none. With no frame the error
// wraps fs.ErrNotExist.
func LatestFramePath(s *Store) (string, error) {
	root, err := os.OpenRoot(s.Root)
	if err != nil {
		return "", fmt.Errorf("latest frame of %s: %w", s.Root, err)
	}
	defer root.Close()
	now := NowDir + "/" + NowFrameName
	if _, err := statInStore(root, now); err == nil {
		return s.Path(NowDir, NowFrameName), nil
	}
	var rel string
	var rowErr error
	err = eachRowBackwards(s, func(l Life, r *Row) bool {
		elem := path.Join(EpisodesDir, r.ID, ObservationFileName)
		if r.Path != "" {
			elem = path.Join(filepath.ToSlash(r.Path), ObservationFileName)
		}
		if r.Image != "" {
			elem = r.Image
		}
		rel, rowErr = s.storeRel(l, elem)
		if rowErr != nil {
			rowErr = fmt.Errorf("index row %s: image %w", r.ID, rowErr)
		}
		return false
	})
	if err == nil {
		err = rowErr
	}
	if err != nil {
		return "", fmt.Errorf("latest frame of %s: %w", s.Root, err)
	}
	if rel == "" {
		return "", fmt.Errorf("latest frame of %s: no now/%s and no episode: %w", s.Root, NowFrameName, fs.ErrNotExist)
	}
	st, err := statInStore(root, rel)
	if err != nil {
		return "", fmt.Errorf("latest frame of %s: %w", s.Root, err)
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("latest frame of %s: %s is not a regular file", s.Root, rel)
	}
	return s.Path(filepath.FromSlash(rel)), nil
}

// eachRowBackwards calls fn with the well-formed index rows of s, newest
// first: the current life's from its end, then each previous life's,
// until fn returns false.
func eachRowBackwards(s *Store, fn func(Life, *Row) bool) error {
	lives, err := s.Lives()
	if err != nil {
		return err
	}
	for i := len(lives) - 1; i >= 0; i-- {
		l := lives[i]
		more := true
		err := ScanBackwards(l.IndexPath(), 0, func(_ int64, line []byte) (bool, error) {
			if len(bytes.TrimSpace(line)) == 0 {
				return true, nil
			}
			r, err := ParseRow(line)
			if err != nil {
				return true, nil // malformed rows are skipped, as ReadRows skips them
			}
			more = fn(l, &r)
			return more, nil
		})
		if err != nil {
			return err
		}
		if !more {
			return nil
		}
	}
	return nil
}
