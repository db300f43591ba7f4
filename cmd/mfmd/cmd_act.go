package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mfm-project/mfm/play"
)

func init() {
	register(&command{
		name:    "act",
		summary: "act in the running play session: run a plan and print the turn block (the agent's one tool)",
		usage:   "[--socket PATH] [-f FILE|-] ['PLAN'] | --list | --status",
		run:     runAct,
	})
}

// defaultPlaySocket is where `mfmd play` links its socket for `mfmd act`
// to find without flags.
func defaultPlaySocket() string {
	return fmt.Sprintf("%s/mfm-play-%d.sock", os.TempDir(), os.Getuid())
}

// playSocket is the socket to use: the flag, $MFM_PLAY_SOCKET, or the
// default link.
func playSocket(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	if s := os.Getenv("MFM_PLAY_SOCKET"); s != "" {
		return s
	}
	return defaultPlaySocket()
}

func runAct(args []string, stdout, stderr io.Writer) int {
	c := commands["act"]
	fl := newFlagSet(c, stdout, stderr)
	sock := fl.String("socket", "", "control socket of the session (default: $MFM_PLAY_SOCKET, else "+defaultPlaySocket()+")")
	file := fl.String("f", "", "read the plan from FILE (- for stdin): a line of entries or the JSON plan {\"actions\": [...]}")
	list := fl.Bool("list", false, "list the atoms with their parameters and your procedures")
	status := fl.Bool("status", false, "print where the run stands (goals, steps, state) without acting")
	timeout := fl.Duration("timeout", 15*time.Minute, "give up waiting for the turn after this long")
	fl.Usage = func() {
		out := fl.Output()
		fmt.Fprintf(out, "mfmd act — %s\n\nUsage: mfmd act %s\n\n", c.summary, c.usage)
		fmt.Fprintln(out, "A plan is one line of entries separated by ';' (NAME key=value ...; a raw action")
		fmt.Fprintln(out, "{\"forward\":1,\"jump\":1} x20), or the JSON plan {\"actions\": [{\"procedure\": NAME,")
		fmt.Fprintln(out, "\"args\": {...}}, {\"action\": {...}, \"repeat\": N}]} from -f FILE or stdin. Entries run")
		fmt.Fprintln(out, "in order; a failed one drops the rest. A refused plan (unknown atom, bad arguments,")
		fmt.Fprintln(out, "over the step cap, the governor) changes nothing and exits 1. After the task has ended")
		fmt.Fprintln(out, "(done or budget) a plan is not run: it exits 1 saying so; write your notes then. See docs/PLAY.md.")
		fmt.Fprintln(out, "  mfmd act 'go_to x=-70 z=189; mine_ahead; collect_drops item=tree'")
		fmt.Fprintln(out, "\nFlags:")
		fl.PrintDefaults()
	}
	if code, done := parseFlags(fl, args, stdout); done {
		return code
	}
	path := playSocket(*sock)
	var q play.Request
	switch {
	case *list && *status:
		fmt.Fprintln(stderr, "mfmd act: --list or --status, not both")
		return 2
	case *list || *status:
		if fl.NArg() > 0 || *file != "" {
			fmt.Fprintln(stderr, "mfmd act: --list and --status take no plan")
			return 2
		}
		q.Op = "list"
		if *status {
			q.Op = "status"
		}
	default:
		plan, err := readPlan(fl.Args(), *file)
		if err != nil {
			return fail(stderr, "act", err)
		}
		q = play.Request{Op: "act", Plan: plan, Source: "act"}
		if s := os.Getenv("MFM_PLAY_SOURCE"); s != "" {
			q.Source = s
		}
	}
	rep, err := play.Call(path, q, *timeout)
	if err != nil {
		return fail(stderr, "act", err)
	}
	fmt.Fprint(stdout, rep.Text)
	if !rep.OK {
		if rep.Refused && rep.Ended != "" && rep.Turn == nil {
			// the run had ended before this plan: the message says so and asks for the notes
			return fail(stderr, "act", errors.New(rep.Error))
		}
		if rep.Refused {
			return fail(stderr, "act", errors.New("plan refused, nothing done: "+rep.Error))
		}
		return fail(stderr, "act", errors.New(rep.Error))
	}
	return 0
}

// readPlan takes the plan from the arguments, -f FILE, or stdin (when
// it is not a terminal).
func readPlan(args []string, file string) (string, error) {
	switch {
	case file != "" && len(args) > 0:
		return "", errors.New("give the plan as arguments or with -f, not both")
	case len(args) == 1 && args[0] == "-", file == "-":
		b, err := io.ReadAll(io.LimitReader(os.Stdin, 1<<20))
		return string(b), err
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("read the plan: %w", err)
		}
		return string(b), nil
	case len(args) > 0:
		return strings.Join(args, " "), nil
	}
	if fi, err := os.Stdin.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		return "", errors.New("no plan: give one as an argument ('go_to x=1 z=2; mine_ahead'), with -f FILE, or on stdin")
	}
	b, err := io.ReadAll(io.LimitReader(os.Stdin, 1<<20))
	return string(b), err
}
