package mcpserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/mfm-project/mfm/episodes"
)

// MaxPathLen is the longest memory path a tool accepts, in bytes.
const MaxPathLen = 4096

// MountPrefix is the mount point the brief (examples/agent/AGENTS.md) and
// the generated README use; a path written with it means the same file.
const MountPrefix = "/mfm"

// CleanPath checks a memory path as a model writes it and returns it as
// a slash path relative to the memory root ("" is the root itself).
//
// It accepts "index.jsonl", "/index.jsonl", "./mine/notes.md" and the
// brief's "/mfm/episodes/ep_000044/outcome.json"; it refuses "..", NUL
// and other control characters, invalid UTF-8 and paths over MaxPathLen,
// with an error that says what was wrong and what is accepted.
func CleanPath(p string) (string, error) {
	if len(p) > MaxPathLen {
		return "", fmt.Errorf("path is %d bytes long; at most %d are accepted", len(p), MaxPathLen)
	}
	if !utf8.ValidString(p) {
		return "", fmt.Errorf("path %q is not valid UTF-8", p)
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return "", fmt.Errorf("path %q contains a control character (%U)", p, r)
		}
	}
	rest := p
	if rest == MountPrefix || strings.HasPrefix(rest, MountPrefix+"/") {
		rest = strings.TrimPrefix(rest, MountPrefix)
	}
	var parts []string
	for _, seg := range strings.Split(rest, "/") {
		switch seg {
		case "", ".":
			continue
		case "..":
			return "", fmt.Errorf("path %q contains \"..\": paths are relative to the memory root (e.g. \"episodes/ep_000012/outcome.json\", \"mine/notes.md\") and cannot leave it", p)
		}
		parts = append(parts, seg)
	}
	return strings.Join(parts, "/"), nil
}

// hiddenRoot reports whether rel (clean) names something in the store
// directory that is not part of the memory: the derived .mfm/ directory
// and the format marker. The mount does not serve them either.
func hiddenRoot(rel string) bool {
	first, _, _ := strings.Cut(rel, "/")
	return first == ".mfm" || first == episodes.FormatFileName
}

// errOutside is wrapped by resolution errors for paths whose symlinks
// lead outside the part of the memory they must stay in.
var errOutside = errors.New("leads outside the memory")

// realRoots are the resolved (symlink-free) store root and mine/.
type realRoots struct {
	root, mine string
}

func newRealRoots(s *episodes.Store) (realRoots, error) {
	root, err := filepath.EvalSymlinks(s.Root)
	if err != nil {
		return realRoots{}, fmt.Errorf("resolve store root %s: %w", s.Root, err)
	}
	return realRoots{root: root, mine: filepath.Join(root, episodes.MineDir)}, nil
}

// within reports whether real is dir or below it.
func within(real, dir string) bool {
	return real == dir || strings.HasPrefix(real, dir+string(filepath.Separator))
}

// resolveRead returns the real file behind the clean store path rel,
// following symlinks only while they stay inside the memory (a symlink
// in mine/ may point at the record, as through the mount, but not out of
// the store, nor into .mfm/). A missing file returns an error satisfying
// errors.Is(err, os.ErrNotExist).
func (rr realRoots) resolveRead(rel string) (string, error) {
	real, err := filepath.EvalSymlinks(filepath.Join(rr.root, filepath.FromSlash(rel)))
	if err != nil {
		return "", err
	}
	if !within(real, rr.root) {
		return "", fmt.Errorf("%s: a symlink %w (to %s)", rel, errOutside, real)
	}
	r, _ := filepath.Rel(rr.root, real)
	if r != "." && hiddenRoot(filepath.ToSlash(r)) {
		return "", fmt.Errorf("%s: a symlink %w (to the store's own %s)", rel, errOutside, filepath.ToSlash(r))
	}
	return real, nil
}

// resolveWrite returns the real path a write to the clean path rel
// (below mine/) replaces, creating missing parent directories inside
// mine/. Every existing component is resolved and must stay in mine/: a
// symlink that leads out of mine/ is refused, as is a directory.
func (rr realRoots) resolveWrite(rel string, create bool) (string, error) {
	sub, ok := strings.CutPrefix(rel, episodes.MineDir+"/")
	if !ok || sub == "" {
		return "", fmt.Errorf("%s is not a file inside mine/", rel)
	}
	parts := strings.Split(sub, "/")
	dir := rr.mine
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("the store has no mine/ directory (%s)", dir)
	}
	for i, name := range parts[:len(parts)-1] {
		next := filepath.Join(dir, name)
		real, err := filepath.EvalSymlinks(next)
		switch {
		case errors.Is(err, os.ErrNotExist):
			if !create {
				return "", fmt.Errorf("%s: %w", rel, os.ErrNotExist)
			}
			if err := os.Mkdir(next, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
				return "", fmt.Errorf("create directory mine/%s: %w", strings.Join(parts[:i+1], "/"), err)
			}
			real, err = filepath.EvalSymlinks(next)
			if err != nil {
				return "", fmt.Errorf("resolve mine/%s: %w", strings.Join(parts[:i+1], "/"), err)
			}
		case err != nil:
			return "", fmt.Errorf("resolve mine/%s: %w", strings.Join(parts[:i+1], "/"), err)
		}
		if !within(real, rr.mine) {
			return "", fmt.Errorf("mine/%s is a symlink that %w/mine (to %s); writes stay inside mine/", strings.Join(parts[:i+1], "/"), errOutside, real)
		}
		fi, err := os.Stat(real)
		if err != nil {
			return "", fmt.Errorf("stat mine/%s: %w", strings.Join(parts[:i+1], "/"), err)
		}
		if !fi.IsDir() {
			return "", fmt.Errorf("mine/%s is a file, not a directory", strings.Join(parts[:i+1], "/"))
		}
		dir = real
	}
	target := filepath.Join(dir, parts[len(parts)-1])
	real, err := filepath.EvalSymlinks(target)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if fi, lerr := os.Lstat(target); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			// A dangling symlink: writing would create its target,
			// wherever it points.
			return "", fmt.Errorf("%s is a symlink to a missing file; replace it with a plain file first", rel)
		}
		if !create {
			return "", fmt.Errorf("%s: %w", rel, os.ErrNotExist)
		}
		return target, nil
	case err != nil:
		return "", fmt.Errorf("resolve %s: %w", rel, err)
	}
	if !within(real, rr.mine) {
		return "", fmt.Errorf("%s is a symlink that %w/mine (to %s); writes stay inside mine/", rel, errOutside, real)
	}
	if fi, err := os.Stat(real); err == nil && fi.IsDir() {
		return "", fmt.Errorf("%s is a directory; write a file inside it", rel)
	}
	return real, nil
}
