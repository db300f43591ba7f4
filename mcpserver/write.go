package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mfm-project/mfm/episodes"
)

// WriteInput is the write tool's arguments.
type WriteInput struct {
	Path    string `json:"path" jsonschema:"a file inside mine/, e.g. mine/notes.md, mine/GUIDE.md, mine/working.md; missing directories are created"`
	Content string `json:"content" jsonschema:"the text to write (at most 1 MiB)"`
	Append  bool   `json:"append,omitempty" jsonschema:"add content at the end of the file instead of replacing it"`
}

// WriteOutput describes a write.
type WriteOutput struct {
	Path    string `json:"path"`
	Bytes   int    `json:"bytes" jsonschema:"size of the file after the call"`
	Created bool   `json:"created,omitempty" jsonschema:"the file did not exist before"`
}

// EditOutput describes an edit.
type EditOutput struct {
	Path         string `json:"path"`
	Bytes        int    `json:"bytes" jsonschema:"size of the file after the call"`
	Replacements int    `json:"replacements" jsonschema:"occurrences of old_text replaced"`
}

// maxRewrite is the largest file an append rewrites (appends are
// atomic: the file is replaced whole).
const maxRewrite = 64 << 20

// errReadOnly is the refusal of a write outside mine/ (or anywhere, in a
// read-only run), the mount's EROFS.
var errReadOnly = errors.New("read-only file system (EROFS)")

// writablePath checks that rel (clean) may be written: inside mine/, not
// a virtual file, and the run is not read-only.
func (s *server) writablePath(op, rel string) error {
	if s.cfg.ReadOnly {
		return fmt.Errorf("%s %s: %w: this memory is frozen for evaluation (mfmd mcp --read-only); nothing can be written", op, rel, errReadOnly)
	}
	sub, ok := strings.CutPrefix(rel, episodes.MineDir+"/")
	if !ok || sub == "" {
		return fmt.Errorf("%s %q: %w: only files inside mine/ can be written (e.g. mine/notes.md); everything else is the record, which nothing changes", op, rel, errReadOnly)
	}
	if rel == episodes.MineDir+"/procedures/.catalog" && s.cfg.Hooks.ProcedureCatalog != nil {
		return fmt.Errorf("%s %s: %w: the procedure catalog is generated from mine/procedures/", op, rel, errReadOnly)
	}
	return nil
}

func (s *server) write(ctx context.Context, _ *mcp.CallToolRequest, in WriteInput) (*mcp.CallToolResult, WriteOutput, error) {
	out := WriteOutput{}
	rel, err := CleanPath(in.Path)
	if err != nil {
		return nil, out, fmt.Errorf("write: %w", err)
	}
	out.Path = rel
	if err := s.writablePath("write", rel); err != nil {
		return nil, out, err
	}
	if len(in.Content) > s.lim.MaxWriteBytes {
		return nil, out, fmt.Errorf("write %s: content is %d bytes, over the %d-byte cap of one call; nothing was written", rel, len(in.Content), s.lim.MaxWriteBytes)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	real, err := s.roots.resolveWrite(rel, true)
	if err != nil {
		return nil, out, fmt.Errorf("write: %w", err)
	}
	perm := os.FileMode(0o644)
	data := []byte(in.Content)
	switch fi, err := os.Stat(real); {
	case err == nil:
		perm = fi.Mode().Perm()
		if in.Append {
			if fi.Size() > maxRewrite {
				return nil, out, fmt.Errorf("write %s: the file is %d bytes; an atomic append rewrites it whole, and files over %d bytes are not rewritten (nothing was written)", rel, fi.Size(), maxRewrite)
			}
			old, err := os.ReadFile(real)
			if err != nil {
				return nil, out, fmt.Errorf("write %s: %w", rel, err)
			}
			data = append(old, data...)
		}
	case errors.Is(err, os.ErrNotExist):
		out.Created = true
	default:
		return nil, out, fmt.Errorf("write %s: %w", rel, err)
	}
	if err := episodes.WriteFileAtomic(real, data, perm); err != nil {
		return nil, out, fmt.Errorf("write %s: %w", rel, err)
	}
	out.Bytes = len(data)
	verb := "wrote"
	if in.Append {
		verb = "appended to"
	}
	return &mcp.CallToolResult{Content: []mcp.Content{textContent(fmt.Sprintf("%s %s (%d bytes now)", verb, rel, len(data)))}}, out, nil
}

// EditInput is the edit tool's arguments.
type EditInput struct {
	Path       string `json:"path" jsonschema:"an existing file inside mine/"`
	OldText    string `json:"old_text" jsonschema:"the exact text to replace; it must occur exactly once unless replace_all is set"`
	NewText    string `json:"new_text" jsonschema:"the text to put in its place (may be empty to delete)"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence of old_text"`
}

func (s *server) edit(ctx context.Context, _ *mcp.CallToolRequest, in EditInput) (*mcp.CallToolResult, EditOutput, error) {
	out := EditOutput{}
	rel, err := CleanPath(in.Path)
	if err != nil {
		return nil, out, fmt.Errorf("edit: %w", err)
	}
	out.Path = rel
	if err := s.writablePath("edit", rel); err != nil {
		return nil, out, err
	}
	if in.OldText == "" {
		return nil, out, fmt.Errorf("edit %s: old_text is empty; give the exact text to replace (write replaces a whole file)", rel)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	real, err := s.roots.resolveWrite(rel, false)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, out, fmt.Errorf("edit %s: no such file; create it with write", rel)
		}
		return nil, out, fmt.Errorf("edit: %w", err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, out, fmt.Errorf("edit %s: %w", rel, err)
	}
	if fi.Size() > int64(s.lim.MaxWriteBytes) {
		return nil, out, fmt.Errorf("edit %s: the file is %d bytes, over the %d-byte cap of one edit", rel, fi.Size(), s.lim.MaxWriteBytes)
	}
	old, err := os.ReadFile(real)
	if err != nil {
		return nil, out, fmt.Errorf("edit %s: %w", rel, err)
	}
	n := strings.Count(string(old), in.OldText)
	switch {
	case n == 0:
		return nil, out, fmt.Errorf("edit %s: old_text not found (nothing changed); read the file and copy the text exactly, whitespace included", rel)
	case n > 1 && !in.ReplaceAll:
		return nil, out, fmt.Errorf("edit %s: old_text occurs %d times (nothing changed); include more of the surrounding text so it occurs once, or set replace_all", rel, n)
	}
	data := []byte(strings.ReplaceAll(string(old), in.OldText, in.NewText))
	if len(data) > s.lim.MaxWriteBytes {
		return nil, out, fmt.Errorf("edit %s: the result would be %d bytes, over the %d-byte cap (nothing changed)", rel, len(data), s.lim.MaxWriteBytes)
	}
	if err := episodes.WriteFileAtomic(real, data, fi.Mode().Perm()); err != nil {
		return nil, out, fmt.Errorf("edit %s: %w", rel, err)
	}
	out.Bytes, out.Replacements = len(data), n
	return &mcp.CallToolResult{Content: []mcp.Content{textContent(fmt.Sprintf("edited %s: %d replacement(s), %d bytes now", rel, n, len(data)))}}, out, nil
}
