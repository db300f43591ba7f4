package episodes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// Row is one index row. Raw holds the row exactly as stored, so a row read
// and written back is byte-identical; the other fields are decoded from it.
// Fields MFM adds (life, time, events) are optional.
type Row struct {
	Raw []byte `json:"-"`

	ID         string   `json:"id"`
	Path       string   `json:"path"`
	Image      string   `json:"image"`
	Kind       string   `json:"kind"`
	FirstStep  int64    `json:"first_step"`
	LastStep   int64    `json:"last_step"`
	ActionKind *string  `json:"action_kind"`
	Summary    string   `json:"summary"`
	Tags       []string `json:"tags"`
	X          float64  `json:"x"`
	Y          float64  `json:"y"`
	Z          float64  `json:"z"`
	GUIOpen    bool     `json:"gui_open"`
	Time       string   `json:"time,omitempty"`   // RFC 3339, when MFM's recorder wrote it
	Events     []string `json:"events,omitempty"` // event lines, when present
	Note       string   `json:"note,omitempty"`   // present in some paper rows
}

// Action returns the action kind, or "" for a null one (the initial row).
func (r *Row) Action() string {
	if r.ActionKind == nil {
		return ""
	}
	return *r.ActionKind
}

// HasTag reports whether the row carries tag t.
func (r *Row) HasTag(t string) bool {
	for _, x := range r.Tags {
		if x == t {
			return true
		}
	}
	return false
}

// ParseRow decodes one index row. The row must be a JSON object with a
// string id; Raw keeps a copy of line.
func ParseRow(line []byte) (Row, error) {
	var r Row
	line = bytes.TrimRight(line, "\r")
	if err := json.Unmarshal(line, &r); err != nil {
		return Row{}, fmt.Errorf("index row: %w", err)
	}
	if r.ID == "" {
		return Row{}, fmt.Errorf("index row: no \"id\"")
	}
	if strings.ContainsAny(r.Path, "\x00") || filepath.IsAbs(r.Path) || strings.HasPrefix(filepath.Clean(r.Path), "..") {
		return Row{}, fmt.Errorf("index row %s: path %q leaves the store", r.ID, r.Path)
	}
	if err := checkRowNames(&r); err != nil {
		return Row{}, err
	}
	r.Raw = append([]byte(nil), line...)
	return r, nil
}

// RowError is a malformed line in a JSONL file.
type RowError struct {
	File string
	Line int
	Err  error
}

func (e *RowError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }
func (e *RowError) Unwrap() error { return e.Err }

// ReadRows calls fn for each well-formed row of the index file at path,
// from byte offset start; malformed rows are passed to bad (which may be
// nil to ignore them). It returns the offset past the last complete line.
func ReadRows(path string, start int64, fn func(Row, Line) error, bad func(*RowError)) (int64, error) {
	return ScanFile(path, start, func(l Line) error {
		if len(bytes.TrimSpace(l.Data)) == 0 {
			return nil
		}
		r, err := ParseRow(l.Data)
		if err != nil {
			if bad != nil {
				bad(&RowError{File: path, Line: l.No, Err: err})
			}
			return nil
		}
		return fn(r, l)
	})
}

// AllRows reads every well-formed row of a life's index.
func (l Life) AllRows() ([]Row, error) {
	var rows []Row
	_, err := ReadRows(l.IndexPath(), 0, func(r Row, _ Line) error {
		rows = append(rows, r)
		return nil
	}, nil)
	return rows, err
}
