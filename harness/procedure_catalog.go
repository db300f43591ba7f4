package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/mfm-project/mfm/episodes"
)

// EpisodeRef names an episode of a life.
type EpisodeRef struct {
	Life int    `json:"life"`
	ID   string `json:"id"`
	Step int64  `json:"step"` // first step
}

// CatalogEntry describes one procedure or reflex of a store: what it
// declares and how it has been used (docs/PROCEDURES.md).
type CatalogEntry struct {
	Name        string  `json:"name"`
	Kind        string  `json:"kind"`
	File        string  `json:"file"` // relative to mine/
	Description string  `json:"description"`
	Params      []Param `json:"params"`
	When        string  `json:"when,omitempty"`
	Disabled    string  `json:"disabled,omitempty"`
	SHA256      string  `json:"sha256"`
	Modified    string  `json:"modified"`
	// Error says why the file cannot be used (it is never run): the
	// other fields are what could be read, all of them for a reflex
	// whose mfm-when does not compile, else name and file at most.
	Error string `json:"error,omitempty"`
	// Calls is the number of episodes that called the procedure (index
	// rows whose action_kind is its name, every life), or for a reflex the
	// number of episodes where it fired.
	Calls int `json:"calls"`
	// LastOutcome is the outcome of the last call: action.json
	// "procedure"."outcome" when MFM recorded it (ok, refused, stopped, …),
	// else "recorded" plus the episode's first note.
	LastOutcome string       `json:"last_outcome,omitempty"`
	Used        []EpisodeRef `json:"used"` // the last 50 episodes that used it
	// Written are the episodes the file cites (ep_NNNNNN in its text) and
	// WrittenBefore the first episode recorded after its last change (rows
	// with a "time"), i.e. the turn in which it was written.
	Written       []EpisodeRef `json:"written"`
	WrittenBefore *EpisodeRef  `json:"written_before,omitempty"`
}

var epRe = regexp.MustCompile(`\bep_[0-9]{6,}\b`)

// maxUsed caps CatalogEntry.Used.
const maxUsed = 50

type lifeRows struct {
	life episodes.Life
	rows []episodes.Row
}

// Catalog lists the procedures (mine/procedures) and reflexes
// (mine/reflexes) of store s with their declarations and use, procedures
// first, each sorted by name; files that cannot be used are listed with
// their Error.
func Catalog(s *episodes.Store) ([]CatalogEntry, error) {
	lives, err := s.Lives()
	if err != nil {
		return nil, err
	}
	var all []lifeRows
	for _, l := range lives {
		rows, err := l.AllRows()
		if err != nil {
			return nil, fmt.Errorf("catalog: %w", err)
		}
		all = append(all, lifeRows{l, rows})
	}
	out := []CatalogEntry{}
	mine := s.Path(episodes.MineDir)
	var reflexNotes map[string][]EpisodeRef
	for _, kind := range []string{KindProcedure, KindReflex} {
		start := len(out)
		dir := filepath.Join(mine, kind+"s")
		if kind == KindReflex {
			dir = filepath.Join(mine, "reflexes")
		}
		procs, bad, err := ListProcedures(dir, kind)
		if err != nil {
			return nil, err
		}
		for _, b := range bad {
			e := CatalogEntry{Kind: kind, Error: b.Error(), Params: []Param{}, Used: []EpisodeRef{}, Written: []EpisodeRef{}}
			var le *LoadError
			if errors.As(b, &le) {
				rel, _ := filepath.Rel(mine, le.Path)
				e.Name, e.File = le.Name, filepath.ToSlash(rel)
			}
			out = append(out, e)
		}
		if kind == KindReflex && len(procs) > 0 {
			reflexNotes = reflexFirings(all)
		}
		for _, p := range procs {
			rel, _ := filepath.Rel(mine, p.Path)
			e := CatalogEntry{Name: p.Name, Kind: kind, File: filepath.ToSlash(rel), Description: p.Description, Params: p.Params,
				When: p.When, Disabled: p.Disabled, SHA256: p.SHA256, Modified: p.ModTime.Format(time.RFC3339), Used: []EpisodeRef{}, Written: []EpisodeRef{}}
			if kind == KindReflex {
				// the runner leaves such a reflex out (LoadReflexes)
				if _, err := NewReflex(p); err != nil {
					e.Error = err.Error()
				}
			}
			if kind == KindProcedure {
				var last *episodes.Row
				var lastLife episodes.Life
				for _, lr := range all {
					for i := range lr.rows {
						r := &lr.rows[i]
						if r.Action() == p.Name {
							e.Calls++
							e.Used = append(e.Used, EpisodeRef{lr.life.N, r.ID, r.FirstStep})
							last, lastLife = r, lr.life
						}
					}
				}
				if last != nil {
					e.LastOutcome = lastOutcome(lastLife, last)
				}
			} else {
				refs := reflexNotes[p.Name]
				e.Calls = len(refs)
				e.Used = append(e.Used, refs...)
				if len(refs) > 0 {
					e.LastOutcome = "fired"
				}
			}
			if len(e.Used) > maxUsed {
				e.Used = e.Used[len(e.Used)-maxUsed:]
			}
			e.Written, e.WrittenBefore = written(p, all)
			out = append(out, e)
		}
		// by name, a usable file before an unusable one of the same name
		kindEntries := out[start:]
		sort.SliceStable(kindEntries, func(i, j int) bool {
			a, b := kindEntries[i], kindEntries[j]
			if a.Name != b.Name {
				return a.Name < b.Name
			}
			return a.Error == "" && b.Error != ""
		})
	}
	return out, nil
}

// lastOutcome reads the outcome of a call from its episode.
func lastOutcome(l episodes.Life, r *episodes.Row) string {
	if a, err := episodes.ReadAction(l.RowDir(r)); err == nil && a.Procedure != nil && a.Procedure.Outcome != "" {
		if a.Procedure.Error != "" {
			return a.Procedure.Outcome + ": " + a.Procedure.Error
		}
		return a.Procedure.Outcome
	}
	if r.Note != "" {
		return "recorded: " + oneLine(r.Note)
	}
	return "recorded"
}

// reflexFirings finds "[REFLEX name]" notes in the outcome.json of rows
// tagged "note".
func reflexFirings(all []lifeRows) map[string][]EpisodeRef {
	out := map[string][]EpisodeRef{}
	for _, lr := range all {
		for _, r := range lr.rows {
			if !r.HasTag("note") {
				continue
			}
			o, err := episodes.ReadOutcome(lr.life.RowDir(&r))
			if err != nil {
				continue
			}
			seen := map[string]bool{}
			for _, n := range o.Notes {
				rest, ok := strings.CutPrefix(n, "[REFLEX ")
				if !ok {
					continue
				}
				name, _, ok := strings.Cut(rest, "]")
				if ok && !seen[name] {
					seen[name] = true
					out[name] = append(out[name], EpisodeRef{lr.life.N, r.ID, r.FirstStep})
				}
			}
		}
	}
	return out
}

// written lists the episodes a script cites and the first episode
// recorded after its last change.
func written(p *Procedure, all []lifeRows) ([]EpisodeRef, *EpisodeRef) {
	refs := []EpisodeRef{}
	data, err := readCiting(p.Path)
	if err == nil {
		ids := map[string]bool{}
		for _, id := range epRe.FindAllString(string(data), -1) {
			ids[id] = true
		}
		// resolve each id in the latest life that has it
		for i := len(all) - 1; i >= 0 && len(ids) > 0; i-- {
			for _, r := range all[i].rows {
				if ids[r.ID] {
					refs = append(refs, EpisodeRef{all[i].life.N, r.ID, r.FirstStep})
					delete(ids, r.ID)
				}
			}
		}
		sort.Slice(refs, func(a, b int) bool {
			if refs[a].Life != refs[b].Life {
				return refs[a].Life < refs[b].Life
			}
			return refs[a].ID < refs[b].ID
		})
	}
	for _, lr := range all {
		for _, r := range lr.rows {
			if r.Time == "" {
				continue
			}
			t, err := time.Parse(time.RFC3339Nano, r.Time)
			if err == nil && !t.Before(p.ModTime) {
				return refs, &EpisodeRef{lr.life.N, r.ID, r.FirstStep}
			}
		}
	}
	return refs, nil
}

// maxCiteScan is how much of a script is searched for the episodes it
// cites (ep_NNNNNN).
const maxCiteScan = 1 << 20

// readCiting reads the first maxCiteScan bytes of the script at path,
// opened confined to mine/ as LoadProcedure opens it.
func readCiting(path string) ([]byte, error) {
	f, err := openScript(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxCiteScan))
}

// CatalogJSON is the catalog as served at /mfm/mine/procedures/.catalog:
// indented JSON, {"procedures": [...], "reflexes": [...]}.
func CatalogJSON(s *episodes.Store) ([]byte, error) {
	entries, err := Catalog(s)
	if err != nil {
		return nil, err
	}
	doc := map[string][]CatalogEntry{"procedures": {}, "reflexes": {}}
	for _, e := range entries {
		key := "procedures"
		if e.Kind == KindReflex {
			key = "reflexes"
		}
		doc[key] = append(doc[key], e)
	}
	b, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// CatalogFunc returns the renderer of /mfm/mine/procedures/.catalog for
// store s (fs.Hooks.ProcedureCatalog): CatalogJSON, computed afresh on
// every call; a cancelled ctx returns its error.
func CatalogFunc(s *episodes.Store) func(ctx context.Context) ([]byte, error) {
	return func(ctx context.Context) ([]byte, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := CatalogJSON(s)
		if err != nil {
			return nil, fmt.Errorf("procedure catalog: %w", err)
		}
		return b, nil
	}
}
