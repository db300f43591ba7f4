package mcpserver

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/harness"
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
	cs, err := s.cfg.Citations()
	if err != nil {
		return nil, out, fmt.Errorf("check: %w", err)
	}
	var text strings.Builder
	for _, r := range cs {
		f := filepath.ToSlash(r.File)
		if prefix != "" && f != prefix && !strings.HasPrefix(f, prefix+"/") {
			continue
		}
		out.Citations++
		if r.Missing == "" {
			out.Resolved++
			continue
		}
		out.Missing = append(out.Missing, Finding{File: f, Line: r.Line, Text: r.Text, Problem: r.Missing})
		fmt.Fprintf(&text, "%s:%d: %q: %s\n", f, r.Line, r.Text, r.Missing)
	}
	if prefix == "" || strings.HasPrefix(episodes.MineDir+"/procedures", prefix) || strings.HasPrefix(prefix, episodes.MineDir+"/procedures") {
		procs, bad, err := harness.ListProcedures(s.cfg.Store.Path(episodes.MineDir, "procedures"), harness.KindProcedure)
		if err != nil {
			return nil, out, fmt.Errorf("check: procedures: %w", err)
		}
		for _, p := range procs {
			if p.Description == "" {
				name := "mine/procedures/" + filepath.Base(p.Path)
				out.ProceduresWithoutDescription = append(out.ProceduresWithoutDescription, name)
				fmt.Fprintf(&text, "%s: procedure %s has no description (want a first comment or docstring line)\n", name, p.Name)
			}
		}
		for _, e := range bad {
			out.BadProcedures = append(out.BadProcedures, e.Error())
			fmt.Fprintf(&text, "mine/procedures: %v\n", e)
		}
	}
	fmt.Fprintf(&text, "%d citation(s), %d to missing episodes; %d procedure(s) without a description\n", out.Citations, len(out.Missing), len(out.ProceduresWithoutDescription))
	return &mcp.CallToolResult{Content: []mcp.Content{textContent(text.String())}}, out, nil
}
