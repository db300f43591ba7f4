package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mfm-project/mfm/index/episodespy"
)

// QueryInput is the query tool's arguments: a cue query or the
// episodes.py flags.
type QueryInput struct {
	Query      string   `json:"query,omitempty" jsonschema:"a cue query: space-separated terms that all must hold, e.g. 'tag:stuck last:5' or 'tag:damage near:-69,188 r:8'"`
	EpisodesPy []string `json:"episodes_py,omitempty" jsonschema:"instead of query: the arguments of the paper's tools/episodes.py, one per element, e.g. [\"--near\", \"-69.4\", \"188.6\", \"--radius\", \"1\", \"--action\", \"pillar_up\"] or [\"--tag\", \"damage\", \"--last\", \"5\"]"`
	Limit      int      `json:"limit,omitempty" jsonschema:"most rows to return, the most recent ones (default and at most 500); count still says how many matched"`
	Sheet      bool     `json:"sheet,omitempty" jsonschema:"also return a contact sheet (PNG) of the last 64 matches' frames"`
	Explain    bool     `json:"explain,omitempty" jsonschema:"also explain the query (the mount's q/<query>/explain): each term in order, how many episodes still matched after it and what it was read as; use it when a count surprises you (0, or too many)"`
}

// QueryRow is one matching index row.
type QueryRow struct {
	Dir string         `json:"dir" jsonschema:"the episode's directory, relative to the memory root (read it, or its files)"`
	Row map[string]any `json:"row" jsonschema:"the index row as recorded in index.jsonl"`
}

// QueryOutput is the query tool's structured result.
type QueryOutput struct {
	Count     int        `json:"count" jsonschema:"how many episodes matched"`
	Returned  int        `json:"returned" jsonschema:"how many rows are in rows (the most recent matches)"`
	Truncated bool       `json:"truncated,omitempty" jsonschema:"more matched than were returned; narrow the query or add last:N"`
	Rows      []QueryRow `json:"rows" jsonschema:"matching rows, oldest first"`
	Explain   string     `json:"explain,omitempty" jsonschema:"with explain: each term, the episodes still matching after it and what it was read as"`
}

func (s *server) query(ctx context.Context, _ *mcp.CallToolRequest, in QueryInput) (*mcp.CallToolResult, QueryOutput, error) {
	out := QueryOutput{Rows: []QueryRow{}}
	q := strings.TrimSpace(in.Query)
	switch {
	case q != "" && len(in.EpisodesPy) > 0:
		return nil, out, errors.New("query: give either query (the cue language) or episodes_py (the episodes.py flags), not both")
	case q == "" && len(in.EpisodesPy) == 0:
		return nil, out, errors.New("query: give query (e.g. \"tag:stuck last:5\") or episodes_py (e.g. [\"--tag\", \"stuck\", \"--last\", \"5\"])")
	case in.Explain && len(in.EpisodesPy) > 0:
		return nil, out, errors.New("query: explain is for the cue language (query), not for episodes_py")
	case in.Explain && s.cfg.Hooks.Explain == nil:
		return nil, out, errors.New("query: this server does not explain queries")
	case in.Limit < 0:
		return nil, out, fmt.Errorf("query: limit %d is negative; give 1 to %d", in.Limit, s.lim.MaxRows)
	}
	limit := in.Limit
	if limit == 0 || limit > s.lim.MaxRows {
		limit = s.lim.MaxRows
	}
	if len(in.EpisodesPy) > 0 {
		return s.episodesPy(ctx, in.EpisodesPy, limit, in.Sheet)
	}
	rows, dirs, err := s.cfg.Hooks.Querier.Query(ctx, q)
	if err != nil {
		return nil, out, fmt.Errorf("query %q: %w\n\n%s", q, err, s.cfg.Hooks.Querier.Grammar())
	}
	out.Count = len(rows)
	first := max(0, len(rows)-limit)
	var text strings.Builder
	for i := first; i < len(rows); i++ {
		var m map[string]any
		if err := json.Unmarshal(rows[i], &m); err != nil {
			return nil, out, fmt.Errorf("query %q: row of %s: %w", q, dirs[i], err)
		}
		out.Rows = append(out.Rows, QueryRow{Dir: dirs[i], Row: m})
		line, err := episodespy.HumanLineOf(rows[i], s.cfg.Store.Root, dirs[i])
		if err != nil {
			line = dirs[i]
		}
		text.WriteString(line)
		text.WriteByte('\n')
	}
	out.Returned = len(out.Rows)
	out.Truncated = out.Returned < out.Count
	if in.Explain {
		b, err := s.cfg.Hooks.Explain(ctx, q)
		if err != nil {
			return nil, out, fmt.Errorf("query %q: explain: %w", q, err)
		}
		out.Explain = string(b)
		text.WriteString("\n")
		text.Write(b)
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{textContent(querySummary(q, out) + text.String())}}
	if in.Sheet {
		if s.cfg.Hooks.Viewer == nil {
			return nil, out, errors.New("query: sheets need views, which this server does not serve")
		}
		if len(rows) > 0 {
			png, err := s.querySheet(ctx, rows, dirs)
			if err != nil {
				return nil, out, fmt.Errorf("query %q: sheet: %w", q, err)
			}
			if len(png) > s.lim.MaxImageBytes {
				return nil, out, imageTooLarge("q/"+q+"/sheet.png", int64(len(png)), s.lim.MaxImageBytes)
			}
			res.Content = append(res.Content, &mcp.ImageContent{Data: png, MIMEType: "image/png"})
		}
	}
	return res, out, nil
}

func querySummary(q string, out QueryOutput) string {
	switch {
	case out.Count == 0:
		return fmt.Sprintf("%s: no matching episodes\n", q)
	case out.Truncated:
		return fmt.Sprintf("%s: %d matches; the last %d:\n", q, out.Count, out.Returned)
	}
	return fmt.Sprintf("%s: %d matches:\n", q, out.Count)
}

// episodesPy runs the paper's episodes.py flags. Paths in them are
// memory paths (checked like read's); --sheet and --then-now images are
// drawn in a temporary directory and returned as image content.
func (s *server) episodesPy(ctx context.Context, argv []string, limit int, sheet bool) (*mcp.CallToolResult, QueryOutput, error) {
	out := QueryOutput{Rows: []QueryRow{}}
	o, err := episodespy.Parse(argv)
	if err != nil {
		var ue *episodespy.UsageError
		if errors.As(err, &ue) {
			return nil, out, fmt.Errorf("episodes.py: %s\n\n%s", ue.Msg, episodespy.Usage())
		}
		return nil, out, fmt.Errorf("episodes.py: %w", err)
	}
	if o.Help {
		return &mcp.CallToolResult{Content: []mcp.Content{textContent(episodespy.Help())}}, out, nil
	}
	if o.Root != "" {
		rel, err := CleanPath(o.Root)
		if err == nil {
			_, err = s.roots.resolveRead(rel)
		}
		if err != nil {
			return nil, out, fmt.Errorf("episodes.py --root %q: %w", o.Root, err)
		}
		o.Root = rel
	}
	if o.ThenNow != nil && strings.ContainsAny(*o.ThenNow, "/.") {
		rel, err := CleanPath(*o.ThenNow)
		if err == nil && !strings.HasPrefix(rel, "episodes/") && !strings.HasPrefix(rel, "previous/") && !strings.HasPrefix(rel, "ep_") {
			_, err = s.roots.resolveRead(rel)
		}
		if err != nil {
			return nil, out, fmt.Errorf("episodes.py --then-now %q: %w", *o.ThenNow, err)
		}
		o.ThenNow = &rel
	}
	tmp, err := os.MkdirTemp("", "mfm-mcp-episodes-")
	if err != nil {
		return nil, out, fmt.Errorf("episodes.py: %w", err)
	}
	defer os.RemoveAll(tmp)
	var images []string
	if o.Sheet != nil || sheet {
		p := filepath.Join(tmp, "sheet.png")
		o.Sheet = &p
		images = append(images, p)
	}
	if o.ThenNow != nil {
		p := filepath.Join(tmp, "then_now.png")
		o.Out = &p
		images = append(images, p)
	}
	r, err := episodespy.Run(ctx, o, episodespy.Env{Store: s.cfg.Store.Root, Cwd: tmp, Render: s.cfg.Renderer})
	if err != nil {
		return nil, out, fmt.Errorf("episodes.py: %w", err)
	}
	if r.Code != 0 {
		return nil, out, fmt.Errorf("episodes.py exited %d: %s", r.Code, strings.TrimSpace(r.Stderr+"\n"+r.Stdout))
	}
	out.Count = len(r.Rows)
	for _, row := range r.Rows[max(0, len(r.Rows)-limit):] {
		var m map[string]any
		if err := json.Unmarshal(row.Raw, &m); err != nil {
			return nil, out, fmt.Errorf("episodes.py: row %s: %w", row.ID, err)
		}
		dir := row.Dir()
		if r, err := filepath.Rel(s.cfg.Store.Root, dir); err == nil && filepath.IsAbs(dir) {
			dir = filepath.ToSlash(r)
		}
		out.Rows = append(out.Rows, QueryRow{Dir: dir, Row: m})
	}
	out.Returned = len(out.Rows)
	out.Truncated = out.Returned < out.Count
	text := r.Stdout
	if len(text) > s.lim.MaxTextBytes {
		text = string(trimCutRune([]byte(text[:s.lim.MaxTextBytes]))) + "\n(output cut at the reply's byte cap; every row is in the structured result)\n"
	}
	if strings.TrimSpace(r.Stderr) != "" {
		text += r.Stderr
	}
	// The images' temporary paths mean nothing to the caller.
	for _, p := range images {
		text = strings.ReplaceAll(text, p, "(the attached image)")
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{textContent(text)}}
	for _, p := range images {
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue // no rows: no sheet
		}
		if err != nil {
			return nil, out, fmt.Errorf("episodes.py: %w", err)
		}
		if len(b) > s.lim.MaxImageBytes {
			return nil, out, imageTooLarge("episodes.py image", int64(len(b)), s.lim.MaxImageBytes)
		}
		res.Content = append(res.Content, &mcp.ImageContent{Data: b, MIMEType: "image/png"})
	}
	return res, out, nil
}
