package consolidate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/internal/filestamp"
)

// Tree is the read-only /consolidate/ tree of a mount (it satisfies
// fs.VirtualTree without importing fs):
//
//	feedback.jsonl          the Monitor's feedback, one episode a line
//	digest.md               what happened since the last consolidation
//	candidates/<id>.md      every curated candidate, readable (status and reason included)
//	candidates/<id>.json    the same as JSON
//	retrieve/<context>      budgeted retrieval for a context (see ParseContext)
//	usage.jsonl             the retrieval history (.mfm/consolidate/usage.jsonl)
//	knowledge.json          the persistent knowledge store K as this pass evolves it
//	                        (mine/knowledge/knowledge.json is what was last written)
//
// Everything is computed from the store, and cached until what it was
// computed from changes (see treeKey); the only write is a retrieval's
// line in usage.jsonl (derived data), at most one per context in
// UsageWindow, since one cat looks a file up and reads it several times.
type Tree struct {
	Store  *episodes.Store
	Config Config
	Now    func() time.Time // nil: time.Now

	mu       sync.Mutex
	logged   map[string]time.Time // context → when its retrieval was last logged
	cached   *Result              // without usage
	key      treeKey
	computes int // how often the result was computed (for tests)
}

// treeKey is what a cached result depends on: the stamp (filestamp) of
// each life's index.jsonl, of previous/ (a life added), mine/procedures/
// (the known procedures), the consolidation marker (the digest's start)
// and the knowledge file. Episode files are complete before their index
// row is appended, so the index stands for E.
type treeKey struct {
	index  string
	prev   filestamp.Stamp
	procs  filestamp.Stamp
	marker filestamp.Stamp
	k      filestamp.Stamp
}

func (t *Tree) treeKey() treeKey {
	var k treeKey
	var b strings.Builder
	if lives, err := t.Store.Lives(); err == nil {
		for _, l := range lives {
			if fi, err := os.Stat(filepath.Join(l.Root, "index.jsonl")); err == nil {
				fmt.Fprintf(&b, "%d:%s;", l.N, filestamp.Of(fi))
			}
		}
	}
	k.index = b.String()
	k.prev = filestamp.Path(t.Store.Path(episodes.PreviousDir))
	k.procs = filestamp.Path(t.Store.Path(episodes.MineDir, "procedures"))
	k.marker = filestamp.Path(t.Store.Path(Dir, "state.json"))
	k.k = filestamp.Path(t.Store.Path(filepath.FromSlash(KnowledgeFile)))
	return k
}

// UsageWindow is how long repeated reads of one retrieval count once.
const UsageWindow = 10 * time.Second

func (t *Tree) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// logUsage records a retrieval unless the same context was logged within UsageWindow.
func (t *Tree) logUsage(ctx Context, got []Candidate) error {
	now := t.now()
	key := ctx.String()
	t.mu.Lock()
	if last, ok := t.logged[key]; ok && now.Sub(last) < UsageWindow && now.Sub(last) >= 0 {
		t.mu.Unlock()
		return nil
	}
	if t.logged == nil {
		t.logged = map[string]time.Time{}
	}
	t.logged[key] = now
	t.mu.Unlock()
	return LogUsage(t.Store, ctx, got, "mount", now)
}

// result is the consolidation of the store as it is now: the cached one
// while the treeKey is unchanged, with the current usage history.
func (t *Tree) result() (*Result, error) {
	k := t.treeKey()
	t.mu.Lock()
	res := t.cached
	if res != nil && t.key != k {
		res = nil
	}
	t.mu.Unlock()
	if res == nil {
		var err error
		res, err = compute(t.Store, t.Config, nil)
		if err != nil {
			return nil, err
		}
		t.mu.Lock()
		t.cached, t.key = res, k
		t.computes++
		t.mu.Unlock()
	}
	return withUsage(t.Store, res)
}

// ReadDir lists dir; names ending in "/" are directories.
func (t *Tree) ReadDir(ctx context.Context, dir string) ([]string, error) {
	switch strings.Trim(dir, "/") {
	case "":
		return []string{"candidates/", "digest.md", "feedback.jsonl", "knowledge.json", "retrieve/", "usage.jsonl"}, nil
	case "retrieve":
		return []string{}, nil
	case "candidates":
		res, err := t.result()
		if err != nil {
			return nil, err
		}
		var names []string
		for _, c := range append(append([]Candidate{}, res.Accepted...), res.Rejected...) {
			names = append(names, c.ID+".json", c.ID+".md")
		}
		sort.Strings(names)
		return names, nil
	}
	return nil, fmt.Errorf("consolidate %s: %w", dir, fs.ErrNotExist)
}

// Open returns a file's bytes or isDir for a directory.
func (t *Tree) Open(ctx context.Context, path string) ([]byte, bool, error) {
	p := strings.Trim(path, "/")
	switch p {
	case "", "candidates", "retrieve":
		return nil, true, nil
	}
	res, err := t.result()
	if err != nil {
		return nil, false, err
	}
	switch {
	case p == "feedback.jsonl":
		return FeedbackJSONL(res.Feedback), false, nil
	case p == "digest.md":
		return res.Digest, false, nil
	case p == "knowledge.json":
		return KJSON(res.K), false, nil
	case p == "usage.jsonl":
		b, err := os.ReadFile(t.Store.Path(filepath.FromSlash(UsageFile)))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, false, err
		}
		return b, false, nil
	case strings.HasPrefix(p, "candidates/"):
		name := strings.TrimPrefix(p, "candidates/")
		for _, c := range append(append([]Candidate{}, res.Accepted...), res.Rejected...) {
			switch name {
			case c.ID + ".md":
				return []byte(Markdown(c)), false, nil
			case c.ID + ".json":
				return CandidateJSON(c), false, nil
			}
		}
	case strings.HasPrefix(p, "retrieve/"):
		q := strings.TrimPrefix(p, "retrieve/")
		if strings.Contains(q, "/") {
			break
		}
		if u, err := url.PathUnescape(q); err == nil {
			q = u
		}
		ctxt, err := ParseContext(q)
		if err != nil {
			return nil, false, err
		}
		got := Retrieve(res.Knowledge(), ctxt)
		out := RenderRetrieval(ctxt, got)
		if err := t.logUsage(ctxt, got); err != nil {
			out = append([]byte(fmt.Sprintf("(usage not recorded: %v)\n", err)), out...)
		}
		return out, false, nil
	}
	return nil, false, fmt.Errorf("consolidate %s: %w", path, fs.ErrNotExist)
}
