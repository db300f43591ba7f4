package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mfm-project/mfm/episodes"
	mfmfs "github.com/mfm-project/mfm/fs"
)

func init() {
	register(&command{
		name:    "mount",
		summary: "mount a store as a filesystem (foreground; Ctrl-C unmounts)",
		usage:   "--store DIR [--read-only] [--per-open] [--debug] [--shared postgres://… --objects s3://BUCKET/PREFIX --agent NAME] MOUNTPOINT",
		run:     runMount,
	})
}

func runMount(args []string, stdout, stderr io.Writer) int {
	c := commands["mount"]
	fl := newFlagSet(c, stdout, stderr)
	storeDir := fl.String("store", "", "store directory (required)")
	readOnly := fl.Bool("read-only", false, "make mine/ read-only too (memory frozen for evaluation runs)")
	debug := fl.Bool("debug", false, "log every FUSE request")
	readDirPlus := fl.Bool("readdirplus", false, "send attributes with listings when the lister stats the entries (READDIRPLUS_AUTO) on the store's mount too: mine/, q/ and, with --per-open or without root, episodes/; episodes/ and previous/ on mounts of their own always do (see docs/MOUNT.md)")
	perOpen := fl.Bool("per-open", false, "serve episodes/ and previous/ with an OPEN per opened file (kernel passthrough) instead of as mounts of their own read through the kernel's cache; always so without root (see docs/MOUNT.md)")
	noAccess := fl.Bool("no-access-log", false, "do not write store/.mfm/access.jsonl")
	timeout := fl.Duration("render-timeout", 10*time.Second, "upper bound for one query or view render")
	sharing := addSharedFlags(fl)
	fl.Usage = func() {
		out := fl.Output()
		fmt.Fprintf(out, "mfmd mount — %s\n\nUsage: mfmd mount %s\n\n", c.summary, c.usage)
		fmt.Fprintln(out, "Serves the store at MOUNTPOINT until SIGINT/SIGTERM (then unmounts: retries while busy,")
		fmt.Fprintln(out, "then detaches lazily). A stale mount left by a killed daemon is cleared first. As root")
		fmt.Fprintln(out, "it mounts directly; otherwise fusermount3 (package fuse3) must be installed.")
		fmt.Fprintln(out, "The mount's own README.md explains the layout; docs/MOUNT.md documents the design.")
		fmt.Fprintln(out, "\nFlags:")
		fl.PrintDefaults()
	}
	if code, done := parseFlags(fl, args, stdout); done {
		return code
	}
	if *storeDir == "" || fl.NArg() != 1 {
		fmt.Fprintln(stderr, "mfmd mount: need --store DIR and exactly one MOUNTPOINT")
		fl.Usage()
		return 2
	}
	if _, err := sharing.on(); err != nil {
		fmt.Fprintln(stderr, "mfmd mount:", err)
		return 2
	}
	store, err := episodes.Open(*storeDir)
	if err != nil {
		return fail(stderr, "mount", err)
	}
	hooks, cites, closeHooks, err := setupHooks(store)
	if err != nil {
		return fail(stderr, "mount", err)
	}
	defer closeHooks()
	leave, err := sharing.join(store, &hooks, cites)
	if err != nil {
		return fail(stderr, "mount", err)
	}
	defer leave()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := mfmfs.Mount(ctx, store, fl.Arg(0), mfmfs.Options{
		ReadOnly:      *readOnly,
		Debug:         *debug,
		ReadDirPlus:   *readDirPlus,
		PerOpen:       *perOpen,
		NoAccessLog:   *noAccess,
		RenderTimeout: *timeout,
		Hooks:         hooks,
	})
	if err != nil {
		return fail(stderr, "mount", err)
	}
	fmt.Fprintf(stderr, "mfmd: %s mounted at %s (Ctrl-C to unmount)\n", store.Root, srv.Mountpoint())
	return serveUntilSignal(srv, stderr)
}

// mounted is what serveUntilSignal needs of a mount.
type mounted interface {
	Mountpoint() string
	Wait()
	Unmount() error
}

// serveUntilSignal serves srv until it is unmounted from outside or
// SIGINT/SIGTERM comes; then it unmounts (retrying while busy, then
// detaching lazily) and waits for the last open file, unless a second
// signal comes first.
func serveUntilSignal(srv mounted, stderr io.Writer) int {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	waited := make(chan struct{})
	go func() { srv.Wait(); close(waited) }()
	select {
	case <-waited:
		slog.Info("unmounted from outside", slog.String("mountpoint", srv.Mountpoint()))
		return 0
	case s := <-sigs:
		slog.Info("signal: unmounting", slog.String("signal", s.String()))
	}
	if err := srv.Unmount(); err != nil {
		return fail(stderr, "mount", err)
	}
	select {
	case <-waited:
	case s := <-sigs:
		// A second signal while a lazily detached mount still has
		// open files: exit now; the kernel finishes the detach.
		slog.Warn("second signal: exiting before the last open file closed", slog.String("signal", s.String()))
	}
	return 0
}
