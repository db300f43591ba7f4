package episodes

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Severity says whether an Issue makes a store inconsistent.
type Severity int

const (
	// Warning: the store is usable as it is (a frame an index row names is
	// missing, as in paper exports; an episode directory without a row left
	// by a crash; no mfm-store.json).
	Warning Severity = iota
	// Problem: the store is inconsistent (a row without a complete episode,
	// a malformed JSONL line, a torn tail).
	Problem
)

func (s Severity) String() string {
	if s == Problem {
		return "error"
	}
	return "warning"
}

// Issue is one finding of Verify.
type Issue struct {
	Severity Severity
	File     string // path relative to the store root
	Line     int    // 1-based line, 0 if not about a line
	Msg      string
	// Repairable issues (torn tails, interrupted writes) are fixed by
	// Repair.
	Repairable bool
}

func (i Issue) String() string {
	loc := i.File
	if i.Line > 0 {
		loc = fmt.Sprintf("%s:%d", i.File, i.Line)
	}
	s := fmt.Sprintf("%s: %s: %s", i.Severity, loc, i.Msg)
	if i.Repairable {
		s += " (fsck --repair fixes this)"
	}
	return s
}

// Report is the result of Verify.
type Report struct {
	Lives    int
	Rows     int // index rows read, all lives
	GridRows int
	Issues   []Issue
}

// OK reports whether the store has no Problem.
func (r *Report) OK() bool { return r.Count(Problem) == 0 }

// Count returns the number of issues of severity sev.
func (r *Report) Count(sev Severity) int {
	n := 0
	for _, i := range r.Issues {
		if i.Severity == sev {
			n++
		}
	}
	return n
}

// Verify checks the store without changing it: every life's index.jsonl,
// grid.jsonl and logs.txt are well-formed with no torn tail, every index
// row names a complete episode directory (state/state.json and
// outcome.json, plus action.json for kind "episode", all valid JSON; a
// steps.jsonl well-formed and its frames present), ids are unique, a
// life has at most one initial episode and only as its first. Every frame
// (observation/image.png, frames/*.png named by steps.jsonl) is decoded
// fully: one a view could not read is an error. A missing frame is a
// warning. Verify does not need the writer
// lock; a writer appending meanwhile may show up as a torn tail.
func Verify(s *Store) (*Report, error) {
	rep := &Report{}
	if s.Format.Version == 0 {
		rep.add(Warning, FormatFileName, 0, "no format marker: a paper-harness store (format v0); mfmd init is not needed to read it", false)
	}
	if err := s.verifyInterrupted(rep); err != nil {
		return nil, err
	}
	lives, err := s.Lives()
	if err != nil {
		return nil, err
	}
	rep.Lives = len(lives)
	for _, l := range lives {
		if err := s.verifyLife(l, rep); err != nil {
			return nil, err
		}
	}
	escapes, err := CheckConfinement(s)
	if err != nil {
		return nil, err
	}
	rep.Issues = append(rep.Issues, escapes...)
	return rep, nil
}

func (r *Report) add(sev Severity, file string, line int, msg string, repairable bool) {
	r.Issues = append(r.Issues, Issue{Severity: sev, File: file, Line: line, Msg: msg, Repairable: repairable})
}

func (s *Store) rel(p string) string {
	if r, err := filepath.Rel(s.Root, p); err == nil {
		return filepath.ToSlash(r)
	}
	return p
}

func (s *Store) verifyInterrupted(rep *Report) error {
	ents, err := os.ReadDir(s.Path(PreviousDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("verify: %w", err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), lifeTmpPrefix) {
			rep.add(Problem, PreviousDir+"/"+e.Name(), 0, "interrupted life change", true)
		}
	}
	return nil
}

func tornBytes(path string) (int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	end, err := CompleteSize(f)
	if err != nil {
		return 0, err
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size() - end, nil
}

func (s *Store) verifyLife(l Life, rep *Report) error {
	for _, p := range []string{l.IndexPath(), l.GridPath(), l.LogPath()} {
		n, err := tornBytes(p)
		if err != nil {
			return fmt.Errorf("verify %s: %w", p, err)
		}
		if n > 0 {
			rep.add(Problem, s.rel(p), 0, fmt.Sprintf("torn tail: %d byte(s) after the last newline (readers ignore them)", n), l.Current)
		}
	}
	if _, err := os.Stat(l.IndexPath()); errors.Is(err, fs.ErrNotExist) {
		rep.add(Problem, s.rel(l.IndexPath()), 0, "missing", false)
	}
	seen := map[string]int{}
	rows := 0
	initialID, initialLine := "", 0
	_, err := ScanFileMax(l.IndexPath(), 0, MaxRowBytes, func(ln Line) error {
		if ln.Long > 0 {
			rep.add(Problem, s.rel(l.IndexPath()), ln.No, longRow(ln.Long), false)
			return nil
		}
		if len(bytes.TrimSpace(ln.Data)) == 0 {
			rep.add(Problem, s.rel(l.IndexPath()), ln.No, "empty line", false)
			return nil
		}
		row, err := ParseRow(ln.Data)
		if err != nil {
			rep.add(Problem, s.rel(l.IndexPath()), ln.No, err.Error(), false)
			return nil
		}
		rep.Rows++
		if prev, dup := seen[row.ID]; dup {
			rep.add(Problem, s.rel(l.IndexPath()), ln.No, fmt.Sprintf("duplicate id %s (first on line %d)", row.ID, prev), false)
		}
		seen[row.ID] = ln.No
		rows++
		if row.Kind == "initial" {
			switch {
			case initialID != "":
				rep.add(Problem, s.rel(l.IndexPath()), ln.No, fmt.Sprintf("several initial episodes in one life: %s, and %s on line %d", row.ID, initialID, initialLine), false)
			case rows > 1:
				rep.add(Problem, s.rel(l.IndexPath()), ln.No, fmt.Sprintf("initial episode %s is not the first of its life", row.ID), false)
			}
			if initialID == "" {
				initialID, initialLine = row.ID, ln.No
			}
		}
		s.verifyEpisode(l, row, ln.No, rep)
		return nil
	})
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	_, err = ScanFileMax(l.GridPath(), 0, MaxRowBytes, func(ln Line) error {
		if ln.Long > 0 {
			rep.add(Problem, s.rel(l.GridPath()), ln.No, longRow(ln.Long), false)
			return nil
		}
		if _, err := ParseGridRow(ln.Data); err != nil {
			rep.add(Problem, s.rel(l.GridPath()), ln.No, err.Error(), false)
			return nil
		}
		rep.GridRows++
		return nil
	})
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	ents, err := os.ReadDir(filepath.Join(l.Root, EpisodesDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("verify: %w", err)
	}
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, ".tmp-"):
			rep.add(Warning, s.rel(filepath.Join(l.Root, EpisodesDir, name)), 0, "interrupted episode write (invisible to readers; the next writer removes it)", l.Current)
		case e.IsDir():
			if _, ok := seen[name]; !ok {
				if _, isEp := ParseEpisodeID(name); isEp {
					rep.add(Warning, s.rel(filepath.Join(l.Root, EpisodesDir, name)), 0, "episode directory without an index row (a write interrupted before its row; ignored)", false)
				}
			}
		}
	}
	return nil
}

func (s *Store) verifyEpisode(l Life, row Row, line int, rep *Report) {
	idx := s.rel(l.IndexPath())
	if row.Path == "" {
		rep.add(Problem, idx, line, fmt.Sprintf("row %s has no path", row.ID), false)
		return
	}
	dir := filepath.Join(l.Root, filepath.FromSlash(row.Path))
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		rep.add(Problem, idx, line, fmt.Sprintf("row %s: episode directory %s is missing", row.ID, row.Path), false)
		return
	}
	need := []string{StateFileName, OutcomeFileName}
	if row.Kind != "initial" {
		need = append(need, ActionFileName)
	}
	for _, n := range need {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(n)))
		if err != nil {
			rep.add(Problem, idx, line, fmt.Sprintf("row %s: %s/%s is missing", row.ID, row.Path, n), false)
			continue
		}
		if !json.Valid(b) {
			rep.add(Problem, idx, line, fmt.Sprintf("row %s: %s/%s is not valid JSON", row.ID, row.Path, n), false)
		}
	}
	if row.Image != "" {
		p := filepath.Join(l.Root, filepath.FromSlash(row.Image))
		if _, err := os.Stat(p); err != nil {
			rep.add(Warning, idx, line, fmt.Sprintf("row %s: frame %s is missing", row.ID, row.Image), false)
		} else if err := decodePNGFile(p); err != nil {
			rep.add(Problem, idx, line, fmt.Sprintf("row %s: frame %s: %v", row.ID, row.Image, err), false)
		}
	}
	steps := filepath.Join(dir, StepsFileName)
	if _, err := os.Stat(steps); err == nil {
		if n, _ := tornBytes(steps); n > 0 {
			rep.add(Problem, s.rel(steps), 0, "steps.jsonl does not end in a newline", false)
		}
		_, _ = ScanFile(steps, 0, func(ln Line) error {
			var st struct {
				Frame string `json:"frame"`
			}
			if err := json.Unmarshal(ln.Data, &st); err != nil {
				rep.add(Problem, s.rel(steps), ln.No, "not a JSON object: "+err.Error(), false)
				return nil
			}
			if st.Frame != "" {
				if !fs.ValidPath(st.Frame) {
					rep.add(Problem, s.rel(steps), ln.No, fmt.Sprintf("frame path %q is invalid", st.Frame), false)
				} else if p := filepath.Join(dir, filepath.FromSlash(st.Frame)); !exists(p) {
					rep.add(Warning, s.rel(steps), ln.No, fmt.Sprintf("frame %s is missing", st.Frame), false)
				} else if err := decodePNGFile(p); err != nil {
					rep.add(Problem, s.rel(steps), ln.No, fmt.Sprintf("frame %s: %v", st.Frame, err), false)
				}
			}
			return nil
		})
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// decodePNGFile decodes a frame fully, as a view would: a truncated or
// corrupt PNG is an error. Files not named .png are not checked.
func decodePNGFile(p string) error {
	if !strings.EqualFold(filepath.Ext(p), ".png") {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := png.Decode(bufio.NewReader(f)); err != nil {
		return fmt.Errorf("not a readable PNG: %w", err)
	}
	return nil
}

// Repair takes the writer lock and fixes what a crash can leave: torn
// tails of the current life's index.jsonl, grid.jsonl and logs.txt are
// truncated, interrupted episode writes removed, an interrupted life change
// finished. It returns a description of each fix. A second writer gets an
// error wrapping ErrLocked.
func Repair(s *Store) ([]string, error) {
	lk, err := lockStore(s)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	var done []string
	ents, _ := os.ReadDir(s.Path(PreviousDir))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), lifeTmpPrefix) {
			done = append(done, "finished the interrupted life change "+PreviousDir+"/"+e.Name())
		}
	}
	if err := s.finishLifeMove(); err != nil {
		return done, err
	}
	for _, name := range []string{IndexFileName, GridFileName, LogFileName} {
		n, err := RepairTornTail(s.Path(name))
		if err != nil {
			return done, err
		}
		if n > 0 {
			done = append(done, fmt.Sprintf("truncated a torn tail of %d byte(s) from %s", n, name))
		}
	}
	ents, _ = os.ReadDir(s.Path(EpisodesDir))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			if err := os.RemoveAll(s.Path(EpisodesDir, e.Name())); err != nil {
				return done, fmt.Errorf("repair: %w", err)
			}
			done = append(done, "removed the interrupted episode write "+EpisodesDir+"/"+e.Name())
		}
	}
	return done, nil
}

// longRow is the problem of a row past MaxRowBytes.
func longRow(n int64) string {
	return fmt.Sprintf("row of %d bytes, more than the %d a reader takes (the cue index and the maps skip it)", n, MaxRowBytes)
}
