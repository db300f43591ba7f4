package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/harness"
)

func init() {
	register(&command{
		name:    "proc",
		summary: "list, show and dry-run the agent's procedures and reflexes (mine/procedures, mine/reflexes)",
		usage: `list --store DIR [--json]
       mfmd proc show --store DIR NAME
       mfmd proc run --store DIR NAME [--args JSON] [--state FILE] [--timeout 10s]

list   the catalog: name, kind, calls, last outcome, description (--json: the
       catalog as served at /mfm/mine/procedures/.catalog)
show   one procedure or reflex: declaration, parameters, use, source
run    runs procedure NAME against the latest recorded state (now/state.json,
       else the last episode's end state, else its start state) and prints {"actions": [...]}, nested
       procedures expanded; nothing is executed or recorded. A refusal
       (raise SystemExit("...")) prints the message and exits 1.
The procedure contract and declarations are in docs/PROCEDURES.md.`,
		run: runProc,
	})
}

// parseInterleaved parses flags that may come before or after positional
// arguments (mfmd proc run --store D NAME --args J).
func parseInterleaved(flags *flag.FlagSet, args []string, stdout io.Writer) ([]string, int, bool) {
	var pos []string
	for {
		if code, done := parseFlags(flags, args, stdout); done {
			return nil, code, true
		}
		rest := flags.Args()
		if len(rest) == 0 {
			return pos, 0, false
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// procFlags are the flags of mfmd proc's subcommands.
type procFlags struct {
	store, argJSON, stateFile string
	asJSON                    bool
	timeout                   time.Duration
}

func runProc(args []string, stdout, stderr io.Writer) int {
	c := commands["proc"]
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		flags := newFlagSet(c, stdout, stderr)
		flags.SetOutput(stdout)
		flags.Usage()
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	sub := args[0]
	var pf procFlags
	flags := newFlagSet(c, stdout, stderr)
	flags.StringVar(&pf.store, "store", "", "store directory (required)")
	flags.BoolVar(&pf.asJSON, "json", false, "list: print the catalog as JSON")
	flags.StringVar(&pf.argJSON, "args", "{}", "run: the arguments, a JSON object")
	flags.StringVar(&pf.stateFile, "state", "", "run: state JSON file to use instead of the latest recorded state")
	flags.DurationVar(&pf.timeout, "timeout", 10*time.Second, "run: per-process timeout")
	pos, code, done := parseInterleaved(flags, args[1:], stdout)
	if done {
		return code
	}
	if pf.store == "" {
		fmt.Fprintln(stderr, "mfmd proc: --store DIR is required")
		return 2
	}
	s, err := episodes.Open(pf.store)
	if err != nil {
		return fail(stderr, "proc", err)
	}
	switch sub {
	case "list":
		return procList(s, pf, stdout, stderr)
	case "show":
		if len(pos) != 1 {
			fmt.Fprintln(stderr, "mfmd proc show: want one NAME")
			return 2
		}
		return procShow(s, pos[0], stdout, stderr)
	case "run":
		if len(pos) != 1 {
			fmt.Fprintln(stderr, "mfmd proc run: want one NAME")
			return 2
		}
		return procRun(s, pos[0], pf, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "mfmd proc: unknown subcommand %q (want list, show or run)\n", sub)
		return 2
	}
}

// procList prints the catalog: a table, or with --json the catalog as the
// mount serves it.
func procList(s *episodes.Store, pf procFlags, stdout, stderr io.Writer) int {
	if pf.asJSON {
		b, err := harness.CatalogJSON(s)
		if err != nil {
			return fail(stderr, "proc", err)
		}
		stdout.Write(b)
		return 0
	}
	entries, err := harness.Catalog(s)
	if err != nil {
		return fail(stderr, "proc", err)
	}
	if len(entries) == 0 {
		fmt.Fprintf(stdout, "no procedures or reflexes in %s\n", s.Path(episodes.MineDir))
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tCALLS\tLAST\tDESCRIPTION")
	for _, e := range entries {
		if e.Error != "" {
			name := e.Name
			if name == "" {
				name = "?"
			}
			msg, _, _ := strings.Cut(e.Error, "\n") // an mfm-when error goes on to draw the position
			fmt.Fprintf(tw, "%s\t%s\t-\t-\tunusable: %s\n", name, e.Kind, msg)
			continue
		}
		desc := e.Description
		if e.Disabled != "" {
			desc = "[disabled: " + e.Disabled + "] " + desc
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", e.Name, e.Kind, e.Calls, clip(e.LastOutcome, 40), clip(desc, 90))
	}
	tw.Flush()
	return 0
}

// procShow prints one catalog entry and its source.
func procShow(s *episodes.Store, name string, stdout, stderr io.Writer) int {
	entries, err := harness.Catalog(s)
	if err != nil {
		return fail(stderr, "proc", err)
	}
	for _, e := range entries {
		if e.Name == name {
			b, _ := json.MarshalIndent(e, "", " ")
			fmt.Fprintf(stdout, "%s\n\n--- %s\n", b, e.File)
			src, err := os.ReadFile(filepath.Join(s.Path(episodes.MineDir), filepath.FromSlash(e.File)))
			if err == nil {
				stdout.Write(src)
			}
			return 0
		}
	}
	return fail(stderr, "proc", fmt.Errorf("no procedure or reflex %q in %s (mfmd proc list shows them)", name, s.Path(episodes.MineDir)))
}

// procRun dry-runs procedure name against --state or the latest recorded
// state and prints the actions it expands to.
func procRun(s *episodes.Store, name string, pf procFlags, stdout, stderr io.Writer) int {
	var a map[string]any
	if err := json.Unmarshal([]byte(pf.argJSON), &a); err != nil {
		return fail(stderr, "proc", fmt.Errorf("--args %q: want a JSON object: %v", pf.argJSON, err))
	}
	state, from, err := procState(s, pf.stateFile)
	if err != nil {
		return fail(stderr, "proc", err)
	}
	r := &harness.Runner{Dir: s.Path(episodes.MineDir, "procedures"), Timeout: pf.timeout}
	res, err := r.Run(context.Background(), name, a, state)
	if err != nil {
		var pe *harness.ProcError
		if errors.As(err, &pe) && pe.Stderr != "" && pe.Reason != harness.ReasonRefused {
			fmt.Fprintf(stderr, "%s", pe.Stderr)
		}
		return fail(stderr, "proc", err)
	}
	b, err := episodes.MarshalPyIndent(map[string]any{"actions": res.Entries()})
	if err != nil {
		return fail(stderr, "proc", err)
	}
	stdout.Write(append(b, '\n'))
	for _, n := range res.Notes {
		fmt.Fprintln(stderr, "note: "+n)
	}
	fmt.Fprintf(stderr, "%d action(s) from %d procedure run(s) in %s, state from %s\n", len(res.Items), len(res.Invocations), res.Duration.Round(time.Millisecond), from)
	return 0
}

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		return s[:n-3] + "..."
	}
	return s
}

// procState is the state a dry run sees and where it comes from: the
// file given with --state, else the store's latest recorded state
// (episodes.FindLatestState).
func procState(s *episodes.Store, file string) ([]byte, string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		return b, file, err
	}
	latest, err := episodes.FindLatestState(s)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("no recorded state in %s (no now/state.json, no episode with a state); pass --state FILE", s.Root)
	}
	if err != nil {
		return nil, "", err
	}
	return latest.JSON, latest.Source, nil
}
