package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mfm-project/mfm/consolidate"
	"github.com/mfm-project/mfm/episodes"
	mfmfs "github.com/mfm-project/mfm/fs"
	"github.com/mfm-project/mfm/fs/content"
	"github.com/mfm-project/mfm/index/episodespy"
)

// Limits bound every call. A request cannot raise them.
type Limits struct {
	MaxTextBytes  int           // text returned by one read, in bytes
	MaxLines      int           // lines returned by one read
	DefaultLines  int           // lines a read returns when it names no limit
	MaxImageBytes int           // an image returned by read or view, encoded
	MaxWriteBytes int           // content of one write or edit
	MaxRows       int           // rows one query returns (the most recent)
	CallTimeout   time.Duration // one tool call, including renders
	ActTimeout    time.Duration // one act call: the play session's whole turn
}

// DefaultLimits are the limits mfmd mcp runs with.
func DefaultLimits() Limits {
	return Limits{
		MaxTextBytes:  64 << 10,
		MaxLines:      2000,
		DefaultLines:  200,
		MaxImageBytes: 4 << 20,
		MaxWriteBytes: 1 << 20,
		MaxRows:       500,
		CallTimeout:   30 * time.Second,
		ActTimeout:    15 * time.Minute,
	}
}

// Config is what a server serves.
type Config struct {
	Store *episodes.Store
	// Hooks are the mount's services (cmd/mfmd builds the same ones for
	// both): Querier for query and q/, Viewer for view, sheets and map/,
	// Trees, CitedBy, ProcedureCatalog and Provenance as in the mount.
	// A nil hook leaves its part out, as in the mount.
	Hooks mfmfs.Hooks
	// Renderer draws episodes.py's --sheet and --then-now (nil: the
	// tool's plain fallback).
	Renderer episodespy.Renderer
	// Resolver resolves mine/'s citations for check (nil: one over
	// Store); share the mount's to share what it read of the indexes.
	Resolver *consolidate.Resolver
	// PlaySockets are where a play session's control socket (mfmd play)
	// may be, tried in order by act and task on every call: the first a
	// session answers on is used. None: act and task say how to start one.
	PlaySockets []string
	// ReadOnly refuses every write, as mfmd mount --read-only does.
	ReadOnly bool
	Limits   Limits
	// Version is reported to clients.
	Version string
	Logger  *slog.Logger
}

// server holds one memory's state shared by all sessions.
type server struct {
	cfg   Config
	roots realRoots
	lim   Limits
	log   *slog.Logger
	// writeMu serialises write and edit, so an edit's read and replace
	// are not interleaved with another call's.
	writeMu sync.Mutex
}

// New returns an MCP server for cfg's memory. The same server may be run
// on any number of transports and sessions.
func New(cfg Config) (*mcp.Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("mcpserver: no store")
	}
	if cfg.Limits == (Limits{}) {
		cfg.Limits = DefaultLimits()
	}
	if cfg.Limits.ActTimeout <= 0 {
		cfg.Limits.ActTimeout = DefaultLimits().ActTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Resolver == nil {
		cfg.Resolver = &consolidate.Resolver{Store: cfg.Store}
	}
	rr, err := newRealRoots(cfg.Store)
	if err != nil {
		return nil, err
	}
	s := &server{cfg: cfg, roots: rr, lim: cfg.Limits, log: cfg.Logger}
	version := cfg.Version
	if version == "" {
		version = "dev"
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "mfm", Title: "MFM memory", Version: version}, &mcp.ServerOptions{
		Instructions: instructions,
		Capabilities: &mcp.ServerCapabilities{},
	})
	srv.AddReceivingMiddleware(s.recoverCalls)
	s.addTools(srv)
	s.addResources(srv)
	return srv, nil
}

const instructions = `This server is your recorded experience (MFM): one episode per action, with what you saw (frames), did and caused, plus your own notes in mine/. It has the layout of the /mfm mount described in the brief: a path such as /mfm/episodes/ep_000044/outcome.json is "episodes/ep_000044/outcome.json" here. Start by reading README.md (the read tool, or the resource mfm://README.md): it has live counts and real ids. Find episodes with query, open files and directories with read, look at frames and maps with view, keep notes with write and edit (only mine/ is writable), and check your notes' citations with check. When a play session is running (mfmd play), act runs a plan in the game and returns the turn block, and task says where the run stands and lists the atoms.`

// recoverCalls turns a panic in any handler into an error for that call
// alone: a tool call gets a tool error, any other request a protocol
// error. The session and the server go on.
func (s *server) recoverCalls(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			s.log.Error("mcp: handler panicked", slog.String("method", method), slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
			msg := fmt.Sprintf("internal error in %s: %v (the server is still running; this call changed nothing it had not finished)", method, p)
			if method == "tools/call" {
				res, err = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, nil
				return
			}
			res, err = nil, errors.New(msg)
		}()
		return next(ctx, method, req)
	}
}

// readmeURI and briefURI name the resources.
const (
	readmeURI = "mfm://README.md"
	briefURI  = "mfm://brief/AGENTS.md"
)

// briefPreface maps the brief's shell idiom to the tools.
const briefPreface = `You reach this memory through MCP tools, not a shell. Wherever the brief below names a path under /mfm, use the same path with the read tool (read "index.jsonl" with offset -20 for its last 20 lines; read a directory to list it); a /mfm/q/<query>/ directory is the query tool (explain=true for its explain file); an image view or map is the view tool; writing in /mfm/mine/ is write or edit; check verifies the episode ids your notes cite.

`

func (s *server) addResources(srv *mcp.Server) {
	srv.AddResource(&mcp.Resource{
		URI:         readmeURI,
		Name:        "README.md",
		Title:       "The memory's generated guide",
		Description: "What this memory holds right now (counts, real episode ids), its layout, the query and view grammars, and what is writable. Regenerated on every read.",
		MIMEType:    "text/markdown",
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		ctx, cancel := context.WithTimeout(ctx, s.lim.CallTimeout)
		defer cancel()
		b, err := s.readme(ctx)
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: readmeURI, MIMEType: "text/markdown", Text: string(b)}}}, nil
	})
	srv.AddResource(&mcp.Resource{
		URI:         briefURI,
		Name:        "AGENTS.md",
		Title:       "Brief for an agent whose memory is MFM",
		Description: "How to find past experience before acting and how to write what you learn, citing episodes.",
		MIMEType:    "text/markdown",
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: briefURI, MIMEType: "text/markdown", Text: content.AgentBrief}}}, nil
	})
	srv.AddPrompt(&mcp.Prompt{
		Name:        "brief",
		Title:       "Use your MFM memory",
		Description: "The agent brief (examples/agent/AGENTS.md), with how its /mfm paths map to this server's tools.",
	}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{
			Description: "Brief for an agent whose memory is MFM",
			Messages: []*mcp.PromptMessage{{
				Role:    "user",
				Content: &mcp.TextContent{Text: briefPreface + content.AgentBrief},
			}},
		}, nil
	})
}

// readme renders the mount's README.md for this memory.
func (s *server) readme(ctx context.Context) ([]byte, error) {
	st, err := memoryStats(s.cfg.Store)
	if err != nil {
		return nil, fmt.Errorf("README.md: %w", err)
	}
	h := s.cfg.Hooks
	o := content.ReadmeOptions{
		Mountpoint:   MountPrefix,
		ReadOnlyMine: s.cfg.ReadOnly,
		Queries:      h.Querier != nil,
		Views:        h.Viewer != nil,
		Consolidate:  h.Trees["consolidate"] != nil,
	}
	if h.Querier != nil {
		o.QueryHelp = h.Querier.Grammar()
	}
	if h.Viewer != nil {
		o.ViewHelp = h.Viewer.Grammar()
	}
	if h.Provenance != nil {
		md, err := h.Provenance(ctx)
		if err != nil {
			md = "## Provenance\n\nThe store's provenance could not be read: " + strings.ReplaceAll(err.Error(), "\n", " ") + "\n"
		}
		o.Provenance = md
	}
	return content.Readme(st, o), nil
}
