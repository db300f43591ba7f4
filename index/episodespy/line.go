package episodespy

import (
	"encoding/json"
	"fmt"
)

// HumanLineOf is the tool's human line for a raw index row whose episode
// directory is dir (relative to the store at root), with the note the
// tool would show: the row's own, else the first note of its outcome.
// It lets other front ends (mfmd q) print exactly the tool's lines.
func HumanLineOf(raw []byte, root, dir string) (string, error) {
	r := &Row{}
	if err := json.Unmarshal(raw, r); err != nil {
		return "", fmt.Errorf("index row: %w", err)
	}
	r.root = root
	r.Path = dir
	r.note = r.Note
	if r.note == "" {
		r.note = FirstNote(outcomeNotes(r), 220)
	}
	return HumanLine(r), nil
}
