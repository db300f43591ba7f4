package fs

import (
	"context"
	"os"
)

// The mount's extension points. The logic behind queries, views,
// consolidation and the procedure catalog lives in library packages
// (index, view, consolidate, harness) that do not import fs; they satisfy
// these interfaces with builtin types only, and cmd/mfmd wires them into
// Options. A nil hook leaves its part of the tree empty.

// Querier answers cue queries for /q/<query>/.
type Querier interface {
	// Query parses and runs query. rows are the matching index rows
	// verbatim (no trailing newline), in chronological order; dirs[i] is
	// the episode directory of rows[i], relative to the store root
	// ("episodes/ep_000123" or "previous/life_1/episodes/ep_000004").
	// A malformed query returns an error whose message says what was
	// wrong and what is accepted; the mount shows it to the agent.
	Query(ctx context.Context, query string) (rows [][]byte, dirs []string, err error)
	// Grammar is the query language's help text (README.md, /.errors).
	Grammar() string
}

// Viewer renders virtual images.
type Viewer interface {
	// View renders the virtual file at rel, a slash path relative to the
	// mount root ("episodes/ep_000003/observation/image@zoom=4.png",
	// "episodes/ep_000003/sheet.png", "map/here.png"). ok is false when
	// rel is not a view name at all (the mount answers ENOENT); err is a
	// malformed or failed view, shown to the agent.
	View(ctx context.Context, rel string) (data []byte, ok bool, err error)
	// Sheet renders a labelled contact sheet of frames (paths relative to
	// the store root), tile i labelled labels[i].
	Sheet(ctx context.Context, frames, labels []string) ([]byte, error)
	// Grammar is the view grammar's help text (README.md, /.errors).
	Grammar() string
}

// StableViewer is optionally implemented by a Viewer that knows which
// views never change: Stable(rel) is true when the view rel (a name
// View accepted) depends only on files that are never rewritten — a
// recorded episode's frames, an earlier life's grid and index — and not
// on anything live (now/, the current life's grid or index). The mount
// lets the kernel cache such a view (entry, attributes and pages, for
// immutableTTL) beside frames of episodes/ and previous/; every other view is
// re-rendered (through the Viewer's own cache) on each access.
type StableViewer interface {
	Stable(rel string) bool
}

// VirtualTree is a read-only tree of generated files served under one
// root name (for example /consolidate). Paths are slash-separated and
// relative to the tree's root; "" is the root itself.
type VirtualTree interface {
	// ReadDir lists dir; a name ending in "/" is a directory. Lookups
	// may accept names that are not listed.
	ReadDir(ctx context.Context, dir string) ([]string, error)
	// Open returns a file's bytes, or isDir for a directory. A missing
	// path returns an error satisfying errors.Is(err, fs.ErrNotExist)
	// (io/fs); any other error is shown to the agent.
	Open(ctx context.Context, path string) (data []byte, isDir bool, err error)
}

// VirtualStatter is optionally implemented by a VirtualTree whose files
// can be sized without producing their bytes (bytes fetched from
// elsewhere): the mount then answers lookup and getattr with Stat and
// calls Open only when a file is opened. Stat returns the size of a file,
// or isDir for a directory; a missing path returns an error satisfying
// errors.Is(err, fs.ErrNotExist), and a path it cannot size without
// reading it one satisfying errors.Is(err, errors.ErrUnsupported), for
// which the mount calls Open as for a tree without Stat.
type VirtualStatter interface {
	Stat(ctx context.Context, path string) (size int64, isDir bool, err error)
}

// VirtualFileOpener is optionally implemented by a VirtualTree some of
// whose files are kept on local disk, large and growing by appending (a
// shared mount's copies of other agents' index.jsonl and grid.jsonl):
// OpenFile returns such a file open for reading and how many of its bytes
// to serve (a prefix the tree keeps whole), and the mount reads them as
// they are asked for instead of holding the file in memory. ok is false
// for a path not served this way. Such a file should also be sized by
// VirtualStatter, so a lookup does not read it.
type VirtualFileOpener interface {
	OpenFile(ctx context.Context, path string) (f *os.File, size int64, ok bool, err error)
}

// Hooks are the optional library services a mount serves.
type Hooks struct {
	Querier Querier
	Viewer  Viewer
	// Trees are extra read-only top-level directories, by name.
	Trees map[string]VirtualTree
	// CitedBy lists the mine/ files citing an episode, one per line,
	// for /episodes/<id>/cited-by (episodeDir as in Querier.Query).
	CitedBy func(ctx context.Context, episodeDir string) ([]byte, error)
	// ProcedureCatalog renders /mine/procedures/.catalog.
	ProcedureCatalog func(ctx context.Context) ([]byte, error)
	// Provenance returns the README.md section saying which frozen
	// artifact the store was seeded from (Markdown, starting with a
	// "## " heading), or "" when it was not seeded from one. It is called
	// on every render of /README.md.
	Provenance func(ctx context.Context) (string, error)
	// Explain renders /q/<query>/explain: each term of query, how many
	// episodes matched after it and what it was read as.
	Explain func(ctx context.Context, query string) ([]byte, error)
	// Check renders /mine/.check: citations in mine/ of episodes that do
	// not exist (file and line) and procedures without a description.
	Check func(ctx context.Context) ([]byte, error)
}
