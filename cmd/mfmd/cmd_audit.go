package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mfm-project/mfm/audit"
)

// multiFlag collects a repeated flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func init() {
	register(&command{
		name:    "audit",
		summary: "TSR, WGP and VMP of recorded runs against a task chain, side by side",
		usage: `--chain CHAIN.json --store DIR [--label L] [--store DIR2 --label L2 ...] [--json]

Reads every recorded state and event of each store and computes, as MC-EvoBench
defines them: TSR = passed stages / planned; WGP = weighted fraction of strict
edges with verified progress; VMP = eligible milestones reached / eligible.
Several --store flags (each with its --label: no-prior, related, unrelated,
shuffled, ...) print one row per condition. The chain format is docs/AUDIT.md.`,
		run: runAudit,
	})
}

func runAudit(args []string, stdout, stderr io.Writer) int {
	c := commands["audit"]
	fs := newFlagSet(c, stdout, stderr)
	var stores, labels multiFlag
	fs.Var(&stores, "store", "a run's store (repeatable)")
	fs.Var(&labels, "label", "the condition of the preceding --store (repeatable)")
	chainPath := fs.String("chain", "", "task chain JSON (required)")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	if *chainPath == "" || len(stores) == 0 || fs.NArg() != 0 || len(labels) > len(stores) {
		fmt.Fprintln(stderr, "mfmd audit: want --chain CHAIN.json and one or more --store DIR (each optionally with --label)")
		return 2
	}
	ch, err := audit.LoadChain(*chainPath)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	var results []audit.Result
	for i, st := range stores {
		label := st
		if i < len(labels) {
			label = labels[i]
		}
		r, err := audit.Run(ch, label, st)
		if err != nil {
			return fail(stderr, c.name, fmt.Errorf("%s: %w", st, err))
		}
		results = append(results, r)
	}
	if *asJSON {
		b, _ := json.MarshalIndent(results, "", " ")
		fmt.Fprintf(stdout, "%s\n", b)
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "CONDITION\tTSR\tWGP\tVMP\tSTAGES\tSAMPLES")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%d/%d\t%d\n", r.Label, r.TSR, r.WGP, r.VMP, r.Passed, r.Planned, r.Samples)
	}
	tw.Flush()
	return 0
}
