// Command mfmd mounts an agent's recorded experience as a filesystem and
// offers the same queries, views and maintenance as subcommands.
//
// Each subcommand lives in its own file (cmd_<name>.go) and registers itself
// in init with register; main only dispatches.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"sort"
	"strings"
)

// command is one mfmd subcommand.
type command struct {
	name    string
	summary string // one line for mfmd --help
	usage   string // argument synopsis, e.g. "--store DIR [flags]"
	// run executes the command with the arguments after its name and
	// returns the process exit status.
	run func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]*command{}

// register adds a subcommand; it is called from init functions.
func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("mfmd: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

func main() {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel()})))
	stop := startCPUProfile(os.Getenv("MFM_CPUPROFILE"))
	code := dispatch(os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// startCPUProfile writes a CPU profile of the whole run to path (the
// MFM_CPUPROFILE environment variable; read it with go tool pprof) and
// returns the function that ends it. An empty path profiles nothing.
func startCPUProfile(path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		slog.Warn("MFM_CPUPROFILE: no profile", slog.String("path", path), slog.Any("err", err))
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			slog.Warn("MFM_CPUPROFILE: close", slog.String("path", path), slog.Any("err", err))
		}
	}
}

func logLevel() slog.Level {
	if os.Getenv("MFM_DEBUG") != "" {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		if len(args) > 1 && args[0] == "help" {
			return dispatch([]string{args[1], "--help"}, stdout, stderr)
		}
		printHelp(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "mfmd: unknown command %q\n\n", args[0])
		printHelp(stderr)
		return 2
	}
	return c.run(args[1:], stdout, stderr)
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "mfmd — multimodal filesystem memory for long-horizon agents")
	fmt.Fprintln(w, "\nUsage: mfmd COMMAND [flags]   (mfmd COMMAND --help for its flags)")
	fmt.Fprintln(w, "\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nEnvironment: MFM_DEBUG=1 turns on debug logging; MFM_CPUPROFILE=FILE writes a CPU profile of the run (go tool pprof).")
}

// newFlagSet returns a flag set for subcommand c whose -h/--help prints the
// command's summary, synopsis and flags to stdout.
func newFlagSet(c *command, stdout, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("mfmd "+c.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintf(out, "mfmd %s — %s\n\nUsage: mfmd %s %s\n", c.name, c.summary, c.name, c.usage)
		var any bool
		fs.VisitAll(func(*flag.Flag) { any = true })
		if any {
			fmt.Fprintln(out, "\nFlags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parseFlags parses args with fs. It returns (exit, true) when the caller
// must return exit at once: 0 after --help, 2 after a usage error.
//
// The flag package prints the usage itself on both paths; parseFlags holds
// that back so --help prints it once, to stdout, and a usage error prints
// the message and usage once, to stderr.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) (int, bool) {
	usage := fs.Usage
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.Usage = usage
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fs.Usage()
		return 0, true
	}
	if err != nil {
		fs.Usage()
		return 2, true
	}
	return 0, false
}

// fail prints "mfmd NAME: err" to stderr and returns exit status 1.
func fail(stderr io.Writer, name string, err error) int {
	msg := err.Error()
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	fmt.Fprintf(stderr, "mfmd %s: %s", name, msg)
	return 1
}
