package episodes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A store is written by the harness, but its index rows name files by
// path (a row's "path", "image" and "id"), and the daemon serves what
// they name with its own rights to every reader of the mount. So every
// file a row names must be inside the store: the names are checked
// lexically when a row is parsed (checkRowNames: relative, no "..", the
// id one path element), and the files are opened through an os.Root of
// the store, which refuses a symlink leading out of it (openInStore,
// CheckConfinement).

// checkRowNames refuses a row whose id, path or image could name a file
// outside its life's directory.
func checkRowNames(r *Row) error {
	if r.ID == "." || r.ID == ".." || strings.ContainsAny(r.ID, "/\\\x00") {
		return fmt.Errorf("index row: id %q is not an episode directory name (one path element)", r.ID)
	}
	if r.Image != "" && (strings.ContainsRune(r.Image, 0) || !filepath.IsLocal(filepath.FromSlash(r.Image))) {
		return fmt.Errorf("index row %s: image %q leaves the store (want a relative path without ..)", r.ID, r.Image)
	}
	return nil
}

// storeRel returns the store-relative slash path of the file a row of l
// names, elem relative to the life's directory.
func (s *Store) storeRel(l Life, elem string) (string, error) {
	rel, err := filepath.Rel(s.Root, filepath.Join(l.Root, filepath.FromSlash(elem)))
	if err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%q leaves the store", elem)
	}
	return filepath.ToSlash(rel), nil
}

// statInStore stats the store-relative path rel through root: a symlink
// (on the way or at the end) that leads out of the store is an error, a
// missing file wraps fs.ErrNotExist.
func statInStore(root *os.Root, rel string) (fs.FileInfo, error) {
	return root.Stat(filepath.FromSlash(rel))
}

// CheckConfinement finds the index rows, in every life, whose path or
// image leaves the store: named with ".." or absolutely, or through a
// symlink that leads out of it. Each is a Problem on the row's line. Rows
// that do not parse are left to Verify (ParseRow refuses the lexical
// escapes); a file a row names that does not exist is not an escape.
func CheckConfinement(s *Store) ([]Issue, error) {
	root, err := os.OpenRoot(s.Root)
	if err != nil {
		return nil, fmt.Errorf("check confinement of %s: %w", s.Root, err)
	}
	defer root.Close()
	lives, err := s.Lives()
	if err != nil {
		return nil, fmt.Errorf("check confinement of %s: %w", s.Root, err)
	}
	var issues []Issue
	for _, l := range lives {
		_, err := ScanFile(l.IndexPath(), 0, func(ln Line) error {
			r, err := ParseRow(ln.Data)
			if err != nil {
				return nil
			}
			for _, msg := range s.rowEscapes(root, l, &r) {
				issues = append(issues, Issue{Severity: Problem, File: s.rel(l.IndexPath()), Line: ln.No, Msg: msg})
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("check confinement: %w", err)
		}
	}
	return issues, nil
}

// RowEscapes says, one message per field, why the files a row of life l
// names (its episode directory, its image) are not inside the store; nil
// when they are (or do not exist).
func (s *Store) RowEscapes(l Life, r *Row) []string {
	root, err := os.OpenRoot(s.Root)
	if err != nil {
		return []string{fmt.Sprintf("cannot open the store: %v", err)}
	}
	defer root.Close()
	return s.rowEscapes(root, l, r)
}

func (s *Store) rowEscapes(root *os.Root, l Life, r *Row) []string {
	var out []string
	if err := checkRowNames(r); err != nil {
		out = append(out, err.Error())
	}
	dir := r.Path
	field := "path"
	if dir == "" {
		dir, field = EpisodesDir+"/"+r.ID, "id"
	}
	for _, f := range []struct{ field, val string }{{field, dir}, {"image", r.Image}} {
		if f.val == "" {
			continue
		}
		rel, err := s.storeRel(l, f.val)
		if err != nil {
			out = append(out, fmt.Sprintf("index row %s: %s %s", r.ID, f.field, err))
			continue
		}
		if _, err := statInStore(root, rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			out = append(out, fmt.Sprintf("index row %s: %s %q does not stay inside the store: %v", r.ID, f.field, f.val, err))
		}
	}
	return out
}
