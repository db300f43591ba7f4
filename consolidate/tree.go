package consolidate

import (
	"context"
	"fmt"
	"io/fs"
	"net/url"
	"sort"
	"strings"

	"github.com/mfm-project/mfm/episodes"
)

// Tree is the read-only /consolidate/ tree of a mount (it satisfies
// fs.VirtualTree without importing fs):
//
//	feedback.jsonl          the Monitor's feedback, one episode a line
//	digest.md               what happened since the last consolidation
//	candidates/<id>.md      every curated candidate, readable (status and reason included)
//	candidates/<id>.json    the same as JSON
//	retrieve/<context>      budgeted retrieval for a context (see ParseContext)
//
// Everything is computed from the store at each call; nothing is written.
type Tree struct {
	Store  *episodes.Store
	Config Config
}

func (t *Tree) result() (*Result, error) { return Compute(t.Store, t.Config, nil) }

// ReadDir lists dir; names ending in "/" are directories.
func (t *Tree) ReadDir(ctx context.Context, dir string) ([]string, error) {
	switch strings.Trim(dir, "/") {
	case "":
		return []string{"candidates/", "digest.md", "feedback.jsonl", "retrieve/"}, nil
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
		return RenderRetrieval(ctxt, Retrieve(res.Accepted, ctxt)), false, nil
	}
	return nil, false, fmt.Errorf("consolidate %s: %w", path, fs.ErrNotExist)
}
