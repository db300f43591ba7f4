package artifact

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mfm-project/mfm/episodes"
)

// ProvenanceOf returns the provenance a store was seeded with, or nil.
func ProvenanceOf(s *episodes.Store) (*Provenance, error) {
	return parseProvenance(s.Root, s.Format.From)
}

// ReadProvenance returns the provenance recorded in storeDir's
// mfm-store.json ("from", written by Seed), or nil and no error when the
// store was not seeded from an artifact (or is a paper store without
// mfm-store.json). It reads only that file, so the mount's README can call
// it on every render.
func ReadProvenance(storeDir string) (*Provenance, error) {
	b, err := os.ReadFile(filepath.Join(storeDir, episodes.FormatFileName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read provenance: %w", err)
	}
	var f struct {
		From json.RawMessage `json:"from"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("read provenance of %s: %s is not valid JSON: %w", storeDir, episodes.FormatFileName, err)
	}
	return parseProvenance(storeDir, f.From)
}

func parseProvenance(root string, raw json.RawMessage) (*Provenance, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var p Provenance
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("store %s: %s \"from\": %w", root, episodes.FormatFileName, err)
	}
	return &p, nil
}

// Markdown renders the provenance as a README.md section ("## Provenance"),
// a few lines an agent reads to know what memory it started with. A nil
// provenance renders a line saying the store started empty.
func (p *Provenance) Markdown() string {
	var b strings.Builder
	b.WriteString("## Provenance\n\n")
	if p == nil {
		b.WriteString("This store was not seeded from an artifact: everything in it was recorded or written here.\n")
		return b.String()
	}
	src := p.SourceStore
	if src == "" {
		src = "(a paper store without an id)"
	}
	fmt.Fprintf(&b, "This store was seeded from the frozen artifact `%s` (manifest sha256 `%s`), exported %s from store `%s` (%s: %d lives, %d episodes, %d steps), imported %s.\n\n",
		filepath.Base(p.Artifact), p.ManifestSHA256, p.Exported, src, p.SourceRoot, p.SourceLives, p.SourceEpisodes, p.SourceSteps, p.Imported)
	fmt.Fprintf(&b, "- declared include: `%s` — nothing else crossed\n", p.Include)
	fmt.Fprintf(&b, "- %d files (%d bytes): %d in `mine/`, %d episodes\n", p.Files, p.Bytes, p.MineFiles, p.Episodes)
	if len(p.Lives) > 0 {
		keys := make([]string, 0, len(p.Lives))
		for k := range p.Lives {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return p.Lives[keys[i]] < p.Lives[keys[j]] })
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("source life %s → `previous/%s/`", k, episodes.LifeName(p.Lives[k])))
		}
		fmt.Fprintf(&b, "- episodes: %s\n", strings.Join(parts, ", "))
	}
	b.WriteString("- check the archive with `mfmd artifact verify " + filepath.Base(p.Artifact) + "`\n")
	return b.String()
}
