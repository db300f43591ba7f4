package consolidate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/mfm-project/mfm/episodes"
)

// KnowledgeFile is the persistent knowledge store K, relative to the
// store root: in mine/, the agent's own, so it outlives every run and
// is read back by the next.
const KnowledgeFile = "mine/knowledge/knowledge.json"

// States of an entry of K.
const (
	KActive     = "active"     // retrieved and checked against
	KSuperseded = "superseded" // replaced by a better entry for the same trigger
	KRetired    = "retired"    // the evidence no longer supports it
)

// KEntry is an entry of K: the curated candidate (trigger, content,
// verification, support, confidence, usage) and its life in K.
type KEntry struct {
	Candidate
	State        string   `json:"state"`
	StateReason  string   `json:"state_reason,omitempty"`  // why superseded or retired
	SupersededBy string   `json:"superseded_by,omitempty"` // the entry that replaced it
	FirstSeen    string   `json:"first_seen"`              // when it entered K
	LastChanged  string   `json:"last_changed"`            // when its evidence or state last changed
	History      []string `json:"history"`                 // one line per change, oldest first
}

// K is the persistent knowledge store.
type K struct {
	Version int       `json:"version"`
	Updated string    `json:"updated,omitempty"`
	Entries []*KEntry `json:"entries"`
}

// KVersion is the version of knowledge.json this package writes and reads.
const KVersion = 1

// ReadK reads K from s (empty when absent). A file that is not K's JSON
// is an error naming it: nothing is overwritten then.
func ReadK(s *episodes.Store) (*K, error) {
	p := s.Path(filepath.FromSlash(KnowledgeFile))
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return &K{Version: KVersion}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read knowledge store: %w", err)
	}
	return ParseK(b, p)
}

// ParseK decodes knowledge.json (name is for the error).
func ParseK(b []byte, name string) (*K, error) {
	var k K
	if err := json.Unmarshal(b, &k); err != nil {
		return nil, fmt.Errorf("knowledge store %s: not K's JSON ({\"version\": %d, \"entries\": [...]}): %w", name, KVersion, err)
	}
	if k.Version != KVersion {
		return nil, fmt.Errorf("knowledge store %s: version %d, want %d", name, k.Version, KVersion)
	}
	for i, e := range k.Entries {
		if e == nil || e.ID == "" || e.Kind == "" {
			return nil, fmt.Errorf("knowledge store %s: entry %d has no id or kind", name, i)
		}
		switch e.State {
		case KActive, KSuperseded, KRetired:
		default:
			return nil, fmt.Errorf("knowledge store %s: entry %s: state %q, want active, superseded or retired", name, e.ID, e.State)
		}
	}
	return &k, nil
}

// WriteK writes K atomically to s's mine/knowledge/knowledge.json.
func WriteK(s *episodes.Store, k *K) error {
	p := s.Path(filepath.FromSlash(KnowledgeFile))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("write knowledge store: %w", err)
	}
	if err := episodes.WriteFileAtomic(p, KJSON(k), 0o644); err != nil {
		return fmt.Errorf("write knowledge store: %w", err)
	}
	return nil
}

// KJSON is K's indented JSON.
func KJSON(k *K) []byte {
	j, _ := json.MarshalIndent(k, "", "  ")
	return append(j, '\n')
}

// Active returns the active entries' candidates, by confidence, highest first.
func (k *K) Active() []Candidate {
	var out []Candidate
	for _, e := range k.Entries {
		if e.State == KActive {
			out = append(out, e.Candidate)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Confidence > out[j].Confidence })
	return out
}

// Count returns how many entries are in each state.
func (k *K) Count() (active, superseded, retired int) {
	for _, e := range k.Entries {
		switch e.State {
		case KActive:
			active++
		case KSuperseded:
			superseded++
		case KRetired:
			retired++
		}
	}
	return
}

func (k *K) clone() *K {
	c := &K{Version: k.Version, Updated: k.Updated}
	for _, e := range k.Entries {
		e2 := *e
		e2.History = append([]string(nil), e.History...)
		e2.Support = append([]Ref(nil), e.Support...)
		c.Entries = append(c.Entries, &e2)
	}
	return c
}

// Evolve returns K after one consolidation (MergeOrInsert of Algorithm 3,
// and what the new evidence says of the old entries); k is not changed.
//   - an accepted candidate with the key of an active entry is merged
//     into it: its supporting episodes joined, its support count the
//     number of them, its confidence the one the evidence now gives (a
//     skill's at least N/(N+1) for its N episodes);
//   - an accepted candidate for the trigger of an active entry of lower
//     confidence (the Curator rejects it when the entry's is as high)
//     supersedes that entry, the reason kept;
//   - any other accepted candidate is inserted;
//   - an active entry whose candidate the Curator now rejects is retired
//     with the Curator's reason, and one citing no recorded episode
//     (recorded: by EpisodeKey; nil: not checked) is retired as such;
//   - retrieval counts come from usage (by entry id).
//
// Nothing else changes: a consolidation that brings no new evidence
// leaves K byte-identical. It returns the new K and one line per change.
func Evolve(k *K, accepted, rejected []Candidate, recorded map[string]bool, retrieved map[string]int, now time.Time) (*K, []string) {
	k = k.clone()
	ts := now.UTC().Format(time.RFC3339)
	var changes []string
	note := func(e *KEntry, line string) {
		e.LastChanged = ts
		e.History = append(e.History, ts+" "+line)
		changes = append(changes, e.ID+": "+line)
	}
	byKey := map[string]*KEntry{}
	for _, e := range k.Entries {
		if e.State == KActive {
			byKey[e.key()] = e
		}
	}
	for _, c := range accepted {
		if e, ok := byKey[c.key()]; ok {
			// an episode is its life and id: after mfmd life new the same
			// episodes come back marked previous, and are not new evidence
			added := 0
			seen := map[string]int{}
			for i, r := range e.Support {
				seen[EpisodeKey(r.Life, r.ID)] = i
			}
			for _, r := range c.Support {
				if i, ok := seen[EpisodeKey(r.Life, r.ID)]; ok {
					e.Support[i] = r // where the episode is now
					continue
				}
				e.Support = append(e.Support, r)
				added++
			}
			old := e.Confidence
			usage := e.Usage
			e.Candidate = mergeContent(c, e.Support)
			e.Usage = usage
			if e.Kind == KindSkill {
				n := float64(len(e.Support))
				e.Confidence = round3(math.Max(e.Confidence, n/(n+1)))
			}
			if added > 0 || old != e.Confidence {
				e.LastChanged = ts
				note(e, fmt.Sprintf("merged: +%d episode(s), support %d, confidence %.3f → %.3f", added, e.SupportCount, old, e.Confidence))
			}
			continue
		}
		ne := &KEntry{Candidate: c, State: KActive, FirstSeen: ts, LastChanged: ts}
		ne.SupportCount = len(ne.Support)
		for _, e := range k.Entries {
			if e.State == KActive && e.triggerKey() == c.triggerKey() {
				e.State, e.SupersededBy = KSuperseded, c.ID
				e.StateReason = fmt.Sprintf("superseded by %s for the same trigger (confidence %.3f > %.3f)", c.ID, c.Confidence, e.Confidence)
				note(e, e.StateReason)
				delete(byKey, e.key())
			}
		}
		k.Entries = append(k.Entries, ne)
		byKey[c.key()] = ne
		note(ne, fmt.Sprintf("inserted: %d episode(s), confidence %.3f", len(ne.Support), ne.Confidence))
	}
	acceptedKeys := map[string]bool{}
	for _, c := range accepted {
		acceptedKeys[c.key()] = true
	}
	for _, c := range rejected {
		if acceptedKeys[c.key()] {
			continue // a rejected run beside the accepted one of the same content
		}
		if e, ok := byKey[c.key()]; ok && e.State == KActive {
			e.State, e.StateReason = KRetired, "the curator now rejects it: "+c.Reason
			note(e, e.StateReason)
			delete(byKey, c.key())
		}
	}
	if recorded != nil {
		for _, e := range k.Entries {
			if e.State != KActive {
				continue
			}
			missing := 0
			for _, r := range e.Support {
				if !recorded[EpisodeKey(r.Life, r.ID)] {
					missing++
				}
			}
			if missing == len(e.Support) {
				e.State, e.StateReason = KRetired, "none of its supporting episodes is recorded any more"
				note(e, e.StateReason)
			}
		}
	}
	for _, e := range k.Entries {
		e.Retrieved = retrieved[e.ID]
	}
	if len(changes) > 0 {
		k.Updated = ts
	}
	return k, changes
}

// mergeContent is c with support refs and the support count of a merge.
func mergeContent(c Candidate, support []Ref) Candidate {
	c.Support = support
	c.SupportCount = len(support)
	return c
}
