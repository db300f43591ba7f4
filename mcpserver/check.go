package mcpserver

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mfm-project/mfm/consolidate"
	"github.com/mfm-project/mfm/episodes"
)

// CheckInput is the check tool's arguments.
type CheckInput struct {
	Path string `json:"path,omitempty" jsonschema:"only the citations of this file or directory of mine/ (default: all of mine/)"`
}

// Finding is a citation that names no episode.
type Finding struct {
	File    string `json:"file" jsonschema:"the citing file, relative to the memory root"`
	Line    int    `json:"line"`
	Text    string `json:"text" jsonschema:"the citation as written"`
	Problem string `json:"problem"`
}

// CheckOutput is the check tool's result.
type CheckOutput struct {
	Citations int       `json:"citations" jsonschema:"citations found (episode ids and step references)"`
	Resolved  int       `json:"resolved" jsonschema:"citations that name an existing episode"`
	Missing   []Finding `json:"missing" jsonschema:"citations to episodes that do not exist"`
	// ProceduresWithoutDescription names mine/procedures scripts whose
	// first comment line (their description) is missing.
	ProceduresWithoutDescription []string `json:"procedures_without_description,omitempty" jsonschema:"mine/procedures/ scripts without a description (a first comment or docstring line)"`
	BadProcedures                []string `json:"bad_procedures,omitempty" jsonschema:"mine/procedures/ scripts whose header cannot be read, with why"`
}

// check reports what is wrong in mine/ with consolidate.Check, the code
// behind the mount's mine/.check and mfmd check: the text is that report
// (for a path, its part of it).
func (s *server) check(ctx context.Context, _ *mcp.CallToolRequest, in CheckInput) (*mcp.CallToolResult, CheckOutput, error) {
	out := CheckOutput{Missing: []Finding{}}
	prefix := ""
	if in.Path != "" {
		rel, err := CleanPath(in.Path)
		if err != nil {
			return nil, out, fmt.Errorf("check: %w", err)
		}
		if rel != episodes.MineDir && !strings.HasPrefix(rel, episodes.MineDir+"/") {
			return nil, out, fmt.Errorf("check %q: citations are checked in mine/ only (e.g. mine/notes.md or mine)", in.Path)
		}
		prefix = rel
	}
	rep, err := consolidate.Check(s.cfg.Store, s.cfg.Resolver)
	if err != nil {
		return nil, out, err
	}
	rep = rep.Under(prefix)
	out.Citations = rep.Citations
	out.Resolved = rep.Citations - len(rep.Missing)
	for _, r := range rep.Missing {
		out.Missing = append(out.Missing, Finding{File: filepath.ToSlash(r.File), Line: r.Line, Text: r.Text, Problem: r.Missing})
	}
	out.ProceduresWithoutDescription = rep.NoDescription
	out.BadProcedures = rep.BadProcedures
	return &mcp.CallToolResult{Content: []mcp.Content{textContent(string(rep.Text()))}}, out, ctx.Err()
}
