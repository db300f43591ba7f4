package consolidate

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/mfm-project/mfm/episodes"
)

// Citation is one reference to an episode found in a text.
type Citation struct {
	File string `json:"file,omitempty"` // relative to the store root
	Line int    `json:"line"`
	Text string `json:"text"`           // the matched text
	Life int    `json:"life,omitempty"` // 0 = the current life
	ID   string `json:"id,omitempty"`   // ep_NNNNNN, or "" for a step citation
	Step int64  `json:"step"`           // -1 unless cited by step
}

// citeRe recognises, in order of preference: an episode path (optionally
// in a previous life, optionally followed by a frame), a bare id (ep_123 is
// ep_000123), "life N step S" and "step S".
var citeRe = regexp.MustCompile(`(?i)(?:previous/life_(\d{1,6})/)?episodes/(ep_\d{1,12})(?:/frames/\d+\.png)?|\b(ep_\d{1,12})\b|\blife[ _]?(\d{1,6}),?\s+step\s+(\d{1,15})\b|\bstep\s+(\d{1,15})\b`)

// ParseCitations finds the episode references in text.
func ParseCitations(text []byte) []Citation {
	var out []Citation
	for ln, line := range bytes.Split(text, []byte("\n")) {
		for _, m := range citeRe.FindAllSubmatchIndex(line, -1) {
			g := func(i int) string {
				if m[2*i] < 0 {
					return ""
				}
				return string(line[m[2*i]:m[2*i+1]])
			}
			c := Citation{Line: ln + 1, Text: string(line[m[0]:m[1]]), Step: -1}
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
				c.Step, _ = strconv.ParseInt(g(5), 10, 64)
			default:
				c.Step, _ = strconv.ParseInt(g(6), 10, 64)
			}
			if c.ID == "" && c.Step < 0 {
				continue // overflow
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

// Resolved is a citation with the episode directory it names, or Missing.
type Resolved struct {
	Citation
	Dir     string `json:"dir,omitempty"` // "episodes/ep_…" or "previous/life_N/episodes/ep_…"
	Missing string `json:"missing,omitempty"`
}

type lifeIndex struct {
	life episodes.Life
	ids  map[string]bool
	rows []episodes.Row
}

func loadLives(s *episodes.Store) (map[int]*lifeIndex, int, error) {
	lives, err := s.Lives()
	if err != nil {
		return nil, 0, err
	}
	out := map[int]*lifeIndex{}
	cur := 0
	for _, l := range lives {
		rows, err := l.AllRows()
		if err != nil {
			return nil, 0, fmt.Errorf("citations: life %d: %w", l.N, err)
		}
		li := &lifeIndex{life: l, ids: map[string]bool{}, rows: rows}
		for _, r := range rows {
			li.ids[r.ID] = true
		}
		out[l.N] = li
		if l.Current {
			cur = l.N
		}
	}
	return out, cur, nil
}

func dirOf(li *lifeIndex, id string) string {
	if li.life.Current {
		return "episodes/" + id
	}
	return fmt.Sprintf("previous/life_%d/episodes/%s", li.life.N, id)
}

// Citations scans every text file of mine/ and resolves its citations.
func Citations(s *episodes.Store) ([]Resolved, error) {
	lives, cur, err := loadLives(s)
	if err != nil {
		return nil, err
	}
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
		for _, c := range ParseCitations(b) {
			c.File = filepath.ToSlash(rel)
			out = append(out, resolve(c, lives, cur))
		}
		return nil
	})
	return out, err
}

func resolve(c Citation, lives map[int]*lifeIndex, cur int) Resolved {
	r := Resolved{Citation: c}
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
		if !li.ids[c.ID] {
			r.Missing = fmt.Sprintf("episode %s does not exist in life %d", c.ID, n)
			return r
		}
		r.Dir = dirOf(li, c.ID)
		return r
	}
	for _, row := range li.rows {
		if row.FirstStep < c.Step && c.Step <= row.LastStep || row.FirstStep == c.Step && row.LastStep == c.Step {
			r.Dir = dirOf(li, row.ID)
			return r
		}
	}
	r.Missing = fmt.Sprintf("no episode of life %d covers step %d", n, c.Step)
	return r
}

// CitedBy lists, one per line, the mine/ files citing the episode at
// episodeDir (as fs.Hooks.CitedBy wants).
func CitedBy(s *episodes.Store, episodeDir string) ([]byte, error) {
	cs, err := Citations(s)
	if err != nil {
		return nil, err
	}
	want := strings.Trim(filepath.ToSlash(episodeDir), "/")
	seen := map[string]bool{}
	var files []string
	for _, c := range cs {
		if c.Dir == want && !seen[c.File] {
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
