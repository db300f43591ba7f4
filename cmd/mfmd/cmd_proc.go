package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
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
       else the last episode's state) and prints {"actions": [...]}, nested
       procedures expanded; nothing is executed or recorded. A refusal
       (raise SystemExit("...")) prints the message and exits 1.
The procedure contract and declarations are in docs/PROCEDURES.md.`,
		run: runProc,
	})
}

// parseInterleaved parses flags that may come before or after positional
// arguments (mfmd proc run --store D NAME --args J).
func parseInterleaved(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, int, bool) {
	var pos []string
	for {
		if code, done := parseFlags(fs, args, stdout); done {
			return nil, code, true
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, 0, false
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func runProc(args []string, stdout, stderr io.Writer) int {
	c := commands["proc"]
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fs := newFlagSet(c, stdout, stderr)
		fs.SetOutput(stdout)
		fs.Usage()
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	sub := args[0]
	fs := newFlagSet(c, stdout, stderr)
	store := fs.String("store", "", "store directory (required)")
	asJSON := fs.Bool("json", false, "list: print the catalog as JSON")
	argJSON := fs.String("args", "{}", "run: the arguments, a JSON object")
	stateFile := fs.String("state", "", "run: state JSON file to use instead of the latest recorded state")
	timeout := fs.Duration("timeout", 10*time.Second, "run: per-process timeout")
	pos, code, done := parseInterleaved(fs, args[1:], stdout)
	if done {
		return code
	}
	if *store == "" {
		fmt.Fprintln(stderr, "mfmd proc: --store DIR is required")
		return 2
	}
	s, err := episodes.Open(*store)
	if err != nil {
		return fail(stderr, "proc", err)
	}
	switch sub {
	case "list":
		if *asJSON {
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
	case "show":
		if len(pos) != 1 {
			fmt.Fprintln(stderr, "mfmd proc show: want one NAME")
			return 2
		}
		entries, err := harness.Catalog(s)
		if err != nil {
			return fail(stderr, "proc", err)
		}
		for _, e := range entries {
			if e.Name == pos[0] {
				b, _ := json.MarshalIndent(e, "", " ")
				fmt.Fprintf(stdout, "%s\n\n--- %s\n", b, e.File)
				src, err := os.ReadFile(filepath.Join(s.Path(episodes.MineDir), filepath.FromSlash(e.File)))
				if err == nil {
					stdout.Write(src)
				}
				return 0
			}
		}
		return fail(stderr, "proc", fmt.Errorf("no procedure or reflex %q in %s (mfmd proc list shows them)", pos[0], s.Path(episodes.MineDir)))
	case "run":
		if len(pos) != 1 {
			fmt.Fprintln(stderr, "mfmd proc run: want one NAME")
			return 2
		}
		var a map[string]any
		if err := json.Unmarshal([]byte(*argJSON), &a); err != nil {
			return fail(stderr, "proc", fmt.Errorf("--args %q: want a JSON object: %v", *argJSON, err))
		}
		var state []byte
		var from string
		if *stateFile != "" {
			state, err = os.ReadFile(*stateFile)
			from = *stateFile
		} else {
			state, from, err = latestState(s)
		}
		if err != nil {
			return fail(stderr, "proc", err)
		}
		r := &harness.Runner{Dir: s.Path(episodes.MineDir, "procedures"), Timeout: *timeout}
		res, err := r.Run(context.Background(), pos[0], a, state)
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
	default:
		fmt.Fprintf(stderr, "mfmd proc: unknown subcommand %q (want list, show or run)\n", sub)
		return 2
	}
}

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		return s[:n-3] + "..."
	}
	return s
}

// latestState is the state a procedure sees now: now/state.json, else the
// last episode's end state (outcome.json end_state), else its
// state/state.json.
func latestState(s *episodes.Store) ([]byte, string, error) {
	if b, err := os.ReadFile(s.Path(episodes.NowDir, "state.json")); err == nil {
		return b, "now/state.json", nil
	}
	lives, err := s.Lives()
	if err != nil {
		return nil, "", err
	}
	for i := len(lives) - 1; i >= 0; i-- {
		rows, err := lives[i].AllRows()
		if err != nil {
			return nil, "", err
		}
		// the last episode whose files are present (paper exports may lack some)
		for j := len(rows) - 1; j >= 0; j-- {
			last := rows[j]
			dir := filepath.Join(lives[i].Root, filepath.FromSlash(last.Path))
			if b, err := os.ReadFile(filepath.Join(dir, "outcome.json")); err == nil {
				var o map[string]json.RawMessage
				if json.Unmarshal(b, &o) == nil && len(o["end_state"]) > 0 && string(o["end_state"]) != "null" {
					return o["end_state"], last.ID + "/outcome.json end_state", nil
				}
			}
			if b, err := os.ReadFile(filepath.Join(dir, "state", "state.json")); err == nil {
				return b, last.ID + "/state/state.json", nil
			}
		}
	}
	return nil, "", fmt.Errorf("no recorded state in %s (no now/state.json, no episode with a state); pass --state FILE", s.Root)
}
