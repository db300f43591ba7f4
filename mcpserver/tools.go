package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool names.
const (
	ToolQuery = "query"
	ToolRead  = "read"
	ToolView  = "view"
	ToolWrite = "write"
	ToolEdit  = "edit"
	ToolCheck = "check"
	ToolAct   = "act"
	ToolTask  = "task"
)

func ptr[T any](v T) *T { return &v }

func (s *server) addTools(srv *mcp.Server) {
	closed := ptr(false)
	if s.cfg.Hooks.Querier != nil {
		mcp.AddTool(srv, &mcp.Tool{
			Name:        ToolQuery,
			Title:       "Find episodes",
			Description: queryDescription(s.cfg.Hooks.Querier.Grammar()),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: closed},
		}, bounded(s, s.query))
	}
	mcp.AddTool(srv, &mcp.Tool{
		Name:        ToolRead,
		Title:       "Read a memory path",
		Description: readDescription,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: closed},
	}, bounded(s, s.read))
	if s.cfg.Hooks.Viewer != nil {
		mcp.AddTool(srv, &mcp.Tool{
			Name:        ToolView,
			Title:       "Render a view of frames or the map",
			Description: viewDescription(s.cfg.Hooks.Viewer.Grammar()),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: closed},
		}, bounded(s, s.view))
	}
	mcp.AddTool(srv, &mcp.Tool{
		Name:        ToolWrite,
		Title:       "Write a note in mine/",
		Description: writeDescription,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: closed},
	}, bounded(s, s.write))
	mcp.AddTool(srv, &mcp.Tool{
		Name:        ToolEdit,
		Title:       "Edit a note in mine/",
		Description: editDescription,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: closed},
	}, bounded(s, s.edit))
	mcp.AddTool(srv, &mcp.Tool{
		Name:        ToolCheck,
		Title:       "Check the citations of mine/",
		Description: checkDescription,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: closed},
	}, bounded(s, s.check))
	// act is bounded by Limits.ActTimeout: a turn runs as long as the game takes
	mcp.AddTool(srv, &mcp.Tool{
		Name:        ToolAct,
		Title:       "Act in the game: run a plan",
		Description: actDescription,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(true)},
	}, s.act)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        ToolTask,
		Title:       "The task: goals, steps, atoms",
		Description: taskDescription,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(true)},
	}, bounded(s, s.task))
}

// bounded runs a tool handler under Limits.CallTimeout.
func bounded[In, Out any](s *server, h mcp.ToolHandlerFor[In, Out]) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		ctx, cancel := context.WithTimeout(ctx, s.lim.CallTimeout)
		defer cancel()
		return h(ctx, req, in)
	}
}

func textContent(s string) *mcp.TextContent { return &mcp.TextContent{Text: s} }
