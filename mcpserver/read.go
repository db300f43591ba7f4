package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ReadInput is the read tool's arguments.
type ReadInput struct {
	Path   string `json:"path" jsonschema:"a path in the memory, relative to its root (the brief's /mfm/ prefix is accepted): README.md, index.jsonl, logs.txt, grid.jsonl, episodes/ep_000044/outcome.json, episodes/ep_000044/observation/image.png, mine/notes.md, now/state.json, a directory such as episodes/ep_000044 or mine, or a q/<query>/ or view path"`
	Offset int    `json:"offset,omitempty" jsonschema:"first line to return, 1-based (default 1); negative counts from the end: -20 returns the last 20 lines. Lines of a directory are its entries"`
	Limit  int    `json:"limit,omitempty" jsonschema:"most lines to return (default 200, at most 2000); a reply also stops at 64 KiB and says where to continue"`
}

// ReadOutput describes what read returned.
type ReadOutput struct {
	Path       string `json:"path" jsonschema:"the path read, relative to the memory root"`
	Kind       string `json:"kind" jsonschema:"text, directory or image"`
	StartLine  int    `json:"start_line,omitempty" jsonschema:"number of the first line (or entry) returned"`
	Lines      int    `json:"lines,omitempty" jsonschema:"lines (or entries) returned"`
	NextOffset int    `json:"next_offset,omitempty" jsonschema:"offset to pass to read the lines that follow; absent at the end"`
	TotalLines int    `json:"total_lines,omitempty" jsonschema:"lines in the whole file, when counted (a negative offset counts them)"`
	CutLine    bool   `json:"cut_line,omitempty" jsonschema:"the one line returned is longer than the reply's byte cap and was cut"`
	Bytes      int64  `json:"bytes" jsonschema:"size of the file (or image) in bytes"`
	MIMEType   string `json:"mime_type,omitempty" jsonschema:"the image's type"`
}

func (s *server) read(ctx context.Context, _ *mcp.CallToolRequest, in ReadInput) (*mcp.CallToolResult, ReadOutput, error) {
	out := ReadOutput{}
	rel, err := CleanPath(in.Path)
	if err != nil {
		return nil, out, fmt.Errorf("read: %w", err)
	}
	out.Path = rel
	limit := in.Limit
	switch {
	case limit < 0:
		return nil, out, fmt.Errorf("read %s: limit %d is negative; give a number of lines from 1 to %d", rel, limit, s.lim.MaxLines)
	case limit == 0:
		limit = s.lim.DefaultLines
	case limit > s.lim.MaxLines:
		limit = s.lim.MaxLines
	}
	e, err := s.lookup(ctx, rel)
	if err != nil {
		return nil, out, fmt.Errorf("read: %w", err)
	}
	if e.isDir {
		out.Kind = "directory"
		var b bytes.Buffer
		for _, n := range e.names {
			b.WriteString(n)
			b.WriteByte('\n')
		}
		out.Bytes = int64(b.Len())
		return s.readText(rel, bytes.NewReader(b.Bytes()), int64(b.Len()), in.Offset, limit, &out)
	}
	if e.image != "" {
		return s.readImage(e, &out)
	}
	out.Kind = "text"
	if e.gen {
		out.Bytes = int64(len(e.data))
		return s.readText(rel, bytes.NewReader(e.data), int64(len(e.data)), in.Offset, limit, &out)
	}
	f, err := os.Open(e.real)
	if err != nil {
		return nil, out, fmt.Errorf("read %s: %w", rel, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, out, fmt.Errorf("read %s: %w", rel, err)
	}
	out.Bytes = fi.Size()
	return s.readText(rel, f, fi.Size(), in.Offset, limit, &out)
}

// readText pages a text by lines.
func (s *server) readText(rel string, r io.ReadSeeker, size int64, offset, limit int, out *ReadOutput) (*mcp.CallToolResult, ReadOutput, error) {
	start := offset
	if start == 0 {
		start = 1
	}
	if start < 0 {
		total, err := countTextLines(r)
		if err != nil {
			return nil, *out, fmt.Errorf("read %s: %w", rel, err)
		}
		if _, err := r.Seek(0, io.SeekStart); err != nil {
			return nil, *out, fmt.Errorf("read %s: %w", rel, err)
		}
		out.TotalLines = total
		start = max(1, total+start+1)
		limit = min(limit, -offset)
	}
	p, err := pageLines(r, size, start, limit, s.lim.MaxTextBytes)
	if err != nil {
		return nil, *out, fmt.Errorf("read %s: %w", rel, err)
	}
	if looksBinary(p.text) {
		return nil, *out, fmt.Errorf("read %s: a binary file (%d bytes), not text; images are read as .png/.jpg, other binary files are not served", rel, size)
	}
	out.StartLine, out.Lines, out.CutLine = p.start, p.lines, p.cutLine
	if p.more {
		out.NextOffset = p.start + p.lines
	}
	res := &mcp.CallToolResult{}
	switch {
	case p.startPast:
		res.Content = []mcp.Content{textContent(fmt.Sprintf("(%s has fewer than %d lines)", rel, start))}
	case size == 0:
		res.Content = []mcp.Content{textContent(fmt.Sprintf("(%s is empty)", rel))}
	default:
		res.Content = []mcp.Content{textContent(string(p.text))}
		if p.more || p.cutLine {
			note := fmt.Sprintf("(lines %d-%d of %s", p.start, p.start+p.lines-1, rel)
			if p.cutLine {
				note += fmt.Sprintf("; line %d is longer than %d bytes and was cut", p.start, s.lim.MaxTextBytes)
			}
			if p.more {
				note += fmt.Sprintf("; more follows: read again with offset %d", out.NextOffset)
			}
			res.Content = append(res.Content, textContent(note+")"))
		}
	}
	return res, *out, nil
}

// readImage returns an image file or a rendered one as image content.
func (s *server) readImage(e *entry, out *ReadOutput) (*mcp.CallToolResult, ReadOutput, error) {
	out.Kind, out.MIMEType = "image", e.image
	data := e.data
	if !e.gen {
		fi, err := os.Stat(e.real)
		if err != nil {
			return nil, *out, fmt.Errorf("read %s: %w", e.rel, err)
		}
		if fi.Size() > int64(s.lim.MaxImageBytes) {
			out.Bytes = fi.Size()
			return nil, *out, imageTooLarge(e.rel, fi.Size(), s.lim.MaxImageBytes)
		}
		data, err = os.ReadFile(e.real)
		if err != nil {
			return nil, *out, fmt.Errorf("read %s: %w", e.rel, err)
		}
	}
	out.Bytes = int64(len(data))
	if len(data) > s.lim.MaxImageBytes {
		return nil, *out, imageTooLarge(e.rel, int64(len(data)), s.lim.MaxImageBytes)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{
		textContent(fmt.Sprintf("%s (%s, %d bytes)", e.rel, e.image, len(data))),
		&mcp.ImageContent{Data: data, MIMEType: e.image},
	}}, *out, nil
}

func imageTooLarge(rel string, size int64, max int) error {
	hint := "view a crop or a smaller zoom of it"
	if strings.HasSuffix(path.Base(rel), "sheet.png") || strings.Contains(rel, "sheet@") {
		hint = "ask for fewer tiles (sheet@steps=A..B, sheet@tile=W) or fewer matches (last:N)"
	}
	return fmt.Errorf("read %s: the image is %d bytes, over the %d-byte cap of one reply; %s", rel, size, max, hint)
}

// ViewInput is the view tool's arguments.
type ViewInput struct {
	Path string `json:"path" jsonschema:"a view path, relative to the memory root: a frame with operations (episodes/ep_000044/observation/image@crop=64,48,128,96@zoom=2.png), a contact sheet (episodes/ep_000044/sheet.png, q/tag:damage/sheet.png), then-and-now (…/image@thennow.png) or a map (map/here.png, map/here@r=8.txt, map/at=-69,188@r=8@north=+z.png)"`
}

// ViewOutput describes a rendered view.
type ViewOutput struct {
	Path     string `json:"path"`
	MIMEType string `json:"mime_type" jsonschema:"image/png, image/jpeg, or text/plain for a text map"`
	Bytes    int    `json:"bytes"`
}

func (s *server) view(ctx context.Context, _ *mcp.CallToolRequest, in ViewInput) (*mcp.CallToolResult, ViewOutput, error) {
	out := ViewOutput{}
	rel, err := CleanPath(in.Path)
	if err != nil {
		return nil, out, fmt.Errorf("view: %w", err)
	}
	out.Path = rel
	var data []byte
	if first, sub, _ := strings.Cut(rel, "/"); first == "q" && strings.HasSuffix(sub, "/sheet.png") {
		e, err := s.lookupQuery(ctx, rel, sub)
		if err != nil {
			return nil, out, fmt.Errorf("view: %w", err)
		}
		data = e.data
	} else {
		b, ok, err := s.cfg.Hooks.Viewer.View(ctx, rel)
		if err != nil {
			return nil, out, fmt.Errorf("view %s: %w", rel, err)
		}
		if !ok {
			return nil, out, fmt.Errorf("view %s: not a view of this memory (no such frame or episode, or not a view name); a view is a frame path with @operations, an episode's sheet.png, q/<query>/sheet.png or a map/ path (the tool's description has the grammar)", rel)
		}
		data = b
	}
	out.Bytes = len(data)
	if strings.HasSuffix(rel, ".txt") {
		out.MIMEType = "text/plain"
		if len(data) > s.lim.MaxTextBytes {
			return nil, out, fmt.Errorf("view %s: the text map is %d bytes, over the %d-byte cap; ask for a smaller radius (@r=N)", rel, len(data), s.lim.MaxTextBytes)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{textContent(string(data))}}, out, nil
	}
	out.MIMEType = imageMIME(rel)
	if out.MIMEType == "" {
		out.MIMEType = "image/png"
	}
	if len(data) > s.lim.MaxImageBytes {
		return nil, out, imageTooLarge(rel, int64(len(data)), s.lim.MaxImageBytes)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{
		textContent(fmt.Sprintf("%s (%s, %d bytes)", rel, out.MIMEType, len(data))),
		&mcp.ImageContent{Data: data, MIMEType: out.MIMEType},
	}}, out, nil
}
