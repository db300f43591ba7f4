package consolidate

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/mfm-project/mfm/episodes"
)

// Citation is one reference to an episode found in a text.
type Citation struct {
	File   string `json:"file,omitempty"` // relative to the store root
	Line   int    `json:"line"`
	Text   string `json:"text"`           // the matched text
	Life   int    `json:"life,omitempty"` // 0 = the current life
	ID     string `json:"id,omitempty"`   // ep_NNNNNN, or "" for a step citation
	Step   int64  `json:"step"`           // -1 unless cited by step
	StepTo int64  `json:"step_to"`        // the end of a step range ("steps 214-258"), else -1
	// Agent is another agent's name when the citation is a path under
	// agents/ ("agents/ada/episodes/ep_000012", on a shared mount): it
	// names that agent's episode, which this store cannot check.
	Agent string `json:"agent,omitempty"`
}

// agentCiteRe recognises a citation of another agent's episode by its
// path under agents/ (a shared mount), optionally in a previous life.
var agentCiteRe = regexp.MustCompile(`(?i)\bagents/([a-z0-9_.-]{1,64})/(?:previous/life_(\d{1,6})/)?episodes/(ep_\d{1,12})(?:/frames/\d+\.png)?`)

// stepRangeSep is what may join the two ends of a step range: "-", "–",
// ".." (spaces around them allowed) or " to ".
const stepRangeSep = `(?:\s*(?:-|–|\.\.)\s*|\s+to\s+)`

// citeRe recognises, in order of preference: an episode path (optionally
// in a previous life, optionally followed by a frame), a bare id (ep_123 is
// ep_000123), "life N step S" and "step S", each of the last two also as
// "steps S" and as a range "steps A-B" ("step A..B", "steps A to B").
var citeRe = regexp.MustCompile(`(?i)(?:previous/life_(\d{1,6})/)?episodes/(ep_\d{1,12})(?:/frames/\d+\.png)?` +
	`|\b(ep_\d{1,12})\b` +
	`|\blife[ _]?(\d{1,6}),?\s+steps?\s+(\d{1,15})(?:` + stepRangeSep + `(\d{1,15}))?\b` +
	`|\bsteps?\s+(\d{1,15})(?:` + stepRangeSep + `(\d{1,15}))?\b`)

// ParseCitations finds the episode references in text.
func ParseCitations(text []byte) []Citation {
	var out []Citation
	for ln, line := range bytes.Split(text, []byte("\n")) {
		var others [][2]int // spans of other agents' citations
		for _, m := range agentCiteRe.FindAllSubmatchIndex(line, -1) {
			c := Citation{Line: ln + 1, Text: string(line[m[0]:m[1]]), Step: -1, StepTo: -1,
				Agent: strings.ToLower(string(line[m[2]:m[3]])), ID: normID(string(line[m[6]:m[7]]))}
			if m[4] >= 0 {
				c.Life, _ = strconv.Atoi(string(line[m[4]:m[5]]))
			}
			out = append(out, c)
			others = append(others, [2]int{m[0], m[1]})
		}
		for _, m := range citeRe.FindAllSubmatchIndex(line, -1) {
			if slices.ContainsFunc(others, func(o [2]int) bool { return m[0] < o[1] && o[0] < m[1] }) {
				continue // part of another agent's citation
			}
			g := func(i int) string {
				if m[2*i] < 0 {
					return ""
				}
				return string(line[m[2*i]:m[2*i+1]])
			}
			c := Citation{Line: ln + 1, Text: string(line[m[0]:m[1]]), Step: -1, StepTo: -1}
			var from, to string
			switch {
			case g(2) != "":
				c.ID = normID(g(2))
				if g(1) != "" {
					c.Life, _ = strconv.Atoi(g(1))
				}
			case g(3) != "":
				c.ID = normID(g(3))
			case g(5) != "":
				c.Life, _ = strconv.Atoi(g(4))
				from, to = g(5), g(6)
			default:
				from, to = g(7), g(8)
			}
			if c.ID == "" {
				var err error
				if c.Step, err = strconv.ParseInt(from, 10, 64); err != nil {
					continue // overflow
				}
				if to != "" {
					if c.StepTo, err = strconv.ParseInt(to, 10, 64); err != nil {
						continue
					}
					if c.StepTo == c.Step {
						c.StepTo = -1 // "steps 5-5" is step 5
					}
				}
			}
			out = append(out, c)
		}
	}
	return out
}

func normID(s string) string {
	n, err := strconv.ParseInt(s[3:], 10, 64)
	if err != nil {
		return strings.ToLower(s)
	}
	return episodes.EpisodeID(n)
}

// Resolved is a citation with the episode directories it names, or
// Missing.
type Resolved struct {
	Citation
	Dir string `json:"dir,omitempty"` // "episodes/ep_…" or "previous/life_N/episodes/ep_…" (a step range's first)
	// Dirs are all the episode directories it names: Dir alone, or every
	// episode a step range covers.
	Dirs    []string `json:"dirs,omitempty"`
	Missing string   `json:"missing,omitempty"`
	// Unchecked is a citation of another agent's episode that could not be
	// checked (no shared mount to ask).
	Unchecked bool `json:"unchecked,omitempty"`
}

// Names reports whether the citation names the episode directory dir.
func (r *Resolved) Names(dir string) bool {
	return slices.Contains(r.Dirs, dir)
}

// lifeIndex is what resolving a citation needs of one life's index:
// its episode ids and the steps each covers, in index order.
type lifeIndex struct {
	life   episodes.Life
	ids    map[string]struct{}
	ranges []stepRange
}

type stepRange struct {
	first, last int64
	id          string
}

func (li *lifeIndex) add(r episodes.Row) {
	li.ids[r.ID] = struct{}{}
	li.ranges = append(li.ranges, stepRange{first: r.FirstStep, last: r.LastStep, id: r.ID})
}

// Resolver resolves the citations of mine/ against the store's indexes.
// It keeps what it read of each life's index.jsonl and, since indexes
// only grow, reads at the next call only the rows appended since; an
// index that was replaced or shrank, or a new life, is read whole.
// mine/ is scanned at every call (it is small). The first call on a
// store with a 1M-row index reads it all (seconds); the next ones cost
// a stat per life and the scan of mine/. Safe for concurrent use; the
// zero value is not usable: set Store.
type Resolver struct {
	Store *episodes.Store

	mu     sync.Mutex
	lives  map[string]*lifeCache // by index path
	others OtherEpisodes
}

// OtherEpisodes reports whether another agent's episode exists, as a
// shared mount knows it: known is false for an agent it holds nothing of;
// life 0 is that agent's current life.
type OtherEpisodes func(agent string, life int, id string) (exists, known bool)

// SetOthers lets the Resolver check citations of other agents' episodes
// (agents/NAME/episodes/<id>) against a shared mount; without it they
// are counted as not checked.
func (rs *Resolver) SetOthers(f OtherEpisodes) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.others = f
}

// lifeCache is one life's index as far as the Resolver read it.
type lifeCache struct {
	ino    uint64
	size   int64 // size of the file when readTo was reached
	readTo int64 // offset after the last complete line read
	li     *lifeIndex
}

// load returns the current index of every life and the current life's
// number, reading what changed since the last call.
func (rs *Resolver) load() (map[int]*lifeIndex, int, error) {
	lives, err := rs.Store.Lives()
	if err != nil {
		return nil, 0, err
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.lives == nil {
		rs.lives = map[string]*lifeCache{}
	}
	out := map[int]*lifeIndex{}
	cur := 0
	seen := map[string]bool{}
	for _, l := range lives {
		p := l.IndexPath()
		seen[p] = true
		c, err := rs.refresh(rs.lives[p], l)
		if err != nil {
			return nil, 0, fmt.Errorf("citations: life %d: %w", l.N, err)
		}
		rs.lives[p] = c
		out[l.N] = c.li
		if l.Current {
			cur = l.N
		}
	}
	for p := range rs.lives {
		if !seen[p] {
			delete(rs.lives, p)
		}
	}
	return out, cur, nil
}

// refresh brings c (nil: nothing read yet) up to date with life l's index.
func (rs *Resolver) refresh(c *lifeCache, l episodes.Life) (*lifeCache, error) {
	p := l.IndexPath()
	var ino uint64
	var size int64
	if fi, err := os.Stat(p); err == nil {
		size = fi.Size()
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			ino = st.Ino
		}
	} else if !os.IsNotExist(err) {
		return nil, err
	}
	if c == nil || c.ino != ino || size < c.size || c.li.life != l {
		c = &lifeCache{ino: ino, li: &lifeIndex{life: l, ids: map[string]struct{}{}}}
	}
	if size == c.size && c.readTo > 0 {
		return c, nil
	}
	to, err := episodes.ReadRows(p, c.readTo, func(r episodes.Row, _ episodes.Line) error {
		c.li.add(r)
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	c.readTo, c.size = to, size
	return c, nil
}

func dirOf(li *lifeIndex, id string) string {
	if li.life.Current {
		return "episodes/" + id
	}
	return fmt.Sprintf("previous/life_%d/episodes/%s", li.life.N, id)
}

// Citations scans every text file of mine/ and resolves its citations
// (reading every life's index whole; a Resolver keeps them between calls).
func Citations(s *episodes.Store) ([]Resolved, error) {
	return (&Resolver{Store: s}).Citations()
}

// Citations scans every text file of mine/ and resolves its citations.
func (rs *Resolver) Citations() ([]Resolved, error) {
	s := rs.Store
	lives, cur, err := rs.load()
	if err != nil {
		return nil, err
	}
	rs.mu.Lock()
	others := rs.others
	rs.mu.Unlock()
	mine := s.Path(episodes.MineDir)
	var out []Resolved
	err = filepath.WalkDir(mine, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == mine && os.IsNotExist(err) {
				return filepath.SkipDir
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > 4<<20 {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("citations: %w", err)
		}
		if bytes.IndexByte(b, 0) >= 0 {
			return nil // binary
		}
		rel, _ := filepath.Rel(s.Root, p)
		cs := ParseCitations(b)
		if filepath.ToSlash(rel) == KnowledgeFile {
			if kc, ok := knowledgeCitations(b); ok {
				cs = kc
			}
		}
		for _, c := range cs {
			c.File = filepath.ToSlash(rel)
			r := resolve(c, lives, cur)
			if c.Agent != "" {
				checkOther(&r, others)
			}
			out = append(out, r)
		}
		return nil
	})
	return out, err
}

// checkOther checks a citation of another agent's episode with others
// (nil: it stays unchecked).
func checkOther(r *Resolved, others OtherEpisodes) {
	if others == nil {
		r.Unchecked = true
		return
	}
	exists, known := others(r.Agent, r.Life, r.ID)
	switch {
	case !known:
		r.Missing = fmt.Sprintf("no agent %s shares memory here", r.Agent)
	case !exists && r.Life > 0:
		r.Missing = fmt.Sprintf("agent %s has no episode %s in life %d", r.Agent, r.ID, r.Life)
	case !exists:
		r.Missing = fmt.Sprintf("agent %s has no episode %s in its current life", r.Agent, r.ID)
	}
}

// resolve resolves c against the lives' indexes. An episode covers the
// steps after its first_step up to its last_step (first_step is the state
// before its first step), and an initial episode its one step: "step S"
// names the episode that covers S, and a range "steps A-B", read like an
// index row's first_step..last_step (from the state at A to the state at
// B), names every episode covering a step after A up to B, so a row's own
// first_step-last_step names that episode alone.
func resolve(c Citation, lives map[int]*lifeIndex, cur int) Resolved {
	r := Resolved{Citation: c}
	if c.Agent != "" {
		// Another agent's episode: named by its path, not checked here,
		// and none of this store's episodes.
		r.Dir = "agents/" + c.Agent + "/episodes/" + c.ID
		if c.Life > 0 {
			r.Dir = fmt.Sprintf("agents/%s/previous/life_%d/episodes/%s", c.Agent, c.Life, c.ID)
		}
		return r
	}
	n := c.Life
	if n == 0 {
		n = cur
	}
	li := lives[n]
	if li == nil {
		r.Missing = fmt.Sprintf("life %d does not exist", n)
		return r
	}
	if c.ID != "" {
		if _, ok := li.ids[c.ID]; !ok {
			r.Missing = fmt.Sprintf("episode %s does not exist in life %d", c.ID, n)
			return r
		}
		r.Dir = dirOf(li, c.ID)
		r.Dirs = []string{r.Dir}
		return r
	}
	if c.StepTo < 0 {
		for _, row := range li.ranges {
			if row.covers(c.Step) {
				r.Dir = dirOf(li, row.id)
				r.Dirs = []string{r.Dir}
				return r
			}
		}
		r.Missing = fmt.Sprintf("no episode of life %d covers step %d", n, c.Step)
		return r
	}
	if c.StepTo < c.Step {
		r.Missing = fmt.Sprintf("steps %d-%d run backwards (write the earlier step first)", c.Step, c.StepTo)
		return r
	}
	for _, row := range li.ranges {
		if row.overlaps(c.Step, c.StepTo) {
			r.Dirs = append(r.Dirs, dirOf(li, row.id))
		}
	}
	if len(r.Dirs) == 0 {
		r.Missing = fmt.Sprintf("no episode of life %d covers a step after %d up to %d", n, c.Step, c.StepTo)
		return r
	}
	r.Dir = r.Dirs[0]
	return r
}

// covers reports whether the episode took step s (an initial episode:
// whether its state is at s).
func (sr stepRange) covers(s int64) bool {
	return sr.first < s && s <= sr.last || sr.first == s && sr.last == s
}

// overlaps reports whether the episode covers a step after a up to b.
func (sr stepRange) overlaps(a, b int64) bool {
	if sr.first == sr.last {
		return a < sr.first && sr.first <= b
	}
	return sr.first < b && a < sr.last
}

// CitedBy lists, one per line, the mine/ files citing the episode at
// episodeDir (as fs.Hooks.CitedBy wants), reading every index whole.
func CitedBy(s *episodes.Store, episodeDir string) ([]byte, error) {
	return (&Resolver{Store: s}).CitedBy(episodeDir)
}

// CitedBy lists, one per line, the mine/ files citing the episode at
// episodeDir ("episodes/ep_000012", "previous/life_1/episodes/ep_000003").
func (rs *Resolver) CitedBy(episodeDir string) ([]byte, error) {
	cs, err := rs.Citations()
	if err != nil {
		return nil, err
	}
	want := strings.Trim(filepath.ToSlash(episodeDir), "/")
	seen := map[string]bool{}
	var files []string
	for _, c := range cs {
		if c.Names(want) && !seen[c.File] {
			seen[c.File] = true
			files = append(files, c.File)
		}
	}
	sort.Strings(files)
	var b bytes.Buffer
	for _, f := range files {
		b.WriteString(f + "\n")
	}
	return b.Bytes(), nil
}

// knowledgeCitations are the evidence episodes of the knowledge store K
// (knowledge.json): each entry's support names its episode with its life
// ({"life": 1, "id": "ep_000009", "previous": true}), so an id there is not
// the current life's, as a bare id in a note is. Each citation keeps the
// line of its "id"; false when b is not K's JSON (it is then read as text).
func knowledgeCitations(b []byte) ([]Citation, bool) {
	k, err := ParseK(b, KnowledgeFile)
	if err != nil {
		return nil, false
	}
	var refs []Citation
	for _, e := range k.Entries {
		for _, r := range e.Support {
			refs = append(refs, Citation{Text: fmt.Sprintf("%s: life %d %s", e.ID, r.Life, r.ID),
				Life: r.Life, ID: normID(r.ID), Step: -1, StepTo: -1})
		}
	}
	next := 0
	for ln, line := range bytes.Split(b, []byte("\n")) {
		if next < len(refs) && bytes.Contains(line, []byte(`"id": "`+refs[next].ID+`"`)) {
			refs[next].Line = ln + 1
			next++
		}
	}
	return refs, true
}
