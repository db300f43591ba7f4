package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mfm-project/mfm/consolidate"
	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/mcpserver"
	"github.com/mfm-project/mfm/play"
	"github.com/mfm-project/mfm/view"
)

func init() {
	register(&command{
		name:    "mcp",
		summary: "serve the memory over the Model Context Protocol (stdio, or --http ADDR)",
		usage: "--store DIR [--read-only] [--http ADDR] [--play-socket PATH]\n\n" +
			"Serves the store to an MCP client with the mount's semantics: tools query, read, view,\n" +
			"write and edit (mine/ only), check, and act and task for a running mfmd play session;\n" +
			"the generated README and the agent brief as resources; a prompt that is the brief.\n" +
			"Without --http it speaks MCP on stdin/stdout (what `claude mcp add mfm -- mfmd mcp\n" +
			"--store DIR` runs); with --http ADDR it serves the streamable HTTP transport at\n" +
			"http://ADDR/ until SIGINT/SIGTERM. docs/MCP.md has the tools, their limits and\n" +
			"client setup.",
		run: runMCP,
	})
}

func runMCP(args []string, stdout, stderr io.Writer) int {
	c := commands["mcp"]
	fl := newFlagSet(c, stdout, stderr)
	storeDir := fl.String("store", os.Getenv("MFM_STORE"), "store directory (default $MFM_STORE)")
	readOnly := fl.Bool("read-only", false, "refuse every write, mine/ included (memory frozen for evaluation runs)")
	httpAddr := fl.String("http", "", "serve streamable HTTP on ADDR (host:port; port 0 picks one) instead of stdio")
	timeout := fl.Duration("call-timeout", 30*time.Second, "upper bound for one tool call")
	actTimeout := fl.Duration("act-timeout", 15*time.Minute, "upper bound for one act call (the play session's whole turn)")
	playSock := fl.String("play-socket", "", "control socket of the play session act and task drive (default: $MFM_PLAY_SOCKET, else STORE/.mfm/"+play.SocketName+", else "+defaultPlaySocket()+", whichever a session answers on)")
	if code, done := parseFlags(fl, args, stdout); done {
		return code
	}
	if *storeDir == "" || fl.NArg() != 0 {
		fmt.Fprintln(stderr, "mfmd mcp: need --store DIR and no arguments")
		fl.Usage()
		return 2
	}
	store, err := episodes.Open(*storeDir)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	hooks, _, closeHooks, err := setupHooks(store)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	defer closeHooks()
	lim := mcpserver.DefaultLimits()
	lim.CallTimeout = *timeout
	lim.ActTimeout = *actTimeout
	resolver := &consolidate.Resolver{Store: store}
	srv, err := mcpserver.New(mcpserver.Config{
		Store:       store,
		Hooks:       hooks,
		Renderer:    view.NewFiles(view.DefaultLimits()),
		Resolver:    resolver,
		ReadOnly:    *readOnly,
		Limits:      lim,
		Logger:      slog.Default(),
		PlaySockets: mcpPlaySockets(*playSock, store),
	})
	if err != nil {
		return fail(stderr, c.name, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if *httpAddr == "" {
		if err := srv.Run(ctx, &mcp.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
			return fail(stderr, c.name, err)
		}
		return 0
	}
	ln, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	// The address line is how a script or test finds a port picked with :0.
	fmt.Fprintf(stderr, "mfmd: serving %s over MCP at http://%s/\n", store.Root, ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fail(stderr, c.name, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		slog.Warn("mcp: http shutdown", slog.Any("err", err))
	}
	return 0
}

// mcpPlaySockets are the sockets act and task try, in order: the flag or
// $MFM_PLAY_SOCKET as mfmd act uses them, else the socket of a session
// recording into this store, then the default link mfmd play makes.
func mcpPlaySockets(flagValue string, store *episodes.Store) []string {
	if flagValue != "" || os.Getenv("MFM_PLAY_SOCKET") != "" {
		return []string{playSocket(flagValue)}
	}
	return []string{store.Path(episodes.MetaDir, play.SocketName), defaultPlaySocket()}
}
