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
		summary: "TSR, WGP and VMP of recorded runs against a task chain; the retrieval → retarget analysis",
		usage: `--chain CHAIN.json --store DIR [--label L] [--store DIR2 --label L2 ...] [--json]
       mfmd audit retarget --store DIR [--access FILE] [--store DIR2 ...] [--json]

Scores each store's recorded states against the chain as MC-EvoBench appendix C
defines the metrics: TSR = passed stage occurrences / planned (stages run in
order, each within its step cap from where the previous one passed; the first
that does not pass ends the chain); WGP = weight of the passed stages'
requires/produces/consumes edges / planned weight (TSR when the chain has none);
VMP = item/tool states of the reported stages reached / those not already met
in the first snapshot. A store whose index or run.json names episode folders it
lacks, or with no recorded state, is refused with the reason, not scored.
Several --store flags (each with its --label: no-prior, related, ...) print one
row per condition. The chain format is docs/AUDIT.md.

retarget: MFM's retrieval → retarget analysis (its Fig. 16) of a play store:
retarget rates of turns that opened a stored frame against turns that opened
no image (Fisher's exact test), new destinations within 8 blocks of the
looked-at episode against the position-only null (binomial test), and how many
steps back the reads went. Reads come from --access (default: the store's
.mfm/access.jsonl), else from run.json's reads_before. Several stores are
also pooled.`,
		run: runAudit,
	})
}

func runAudit(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "retarget" {
		return runAuditRetarget(args[1:], stdout, stderr)
	}
	c := commands["audit"]
	fs := newFlagSet(c, stdout, stderr)
	var stores, labels multiFlag
	fs.Var(&stores, "store", "a run's store (repeatable)")
	fs.Var(&labels, "label", "the condition of the preceding --store (repeatable)")
	chainPath := fs.String("chain", "", "task chain JSON (required)")
	asJSON := fs.Bool("json", false, "print the scores as JSON")
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
	var results []audit.Scores
	for i, st := range stores {
		label := st
		if i < len(labels) {
			label = labels[i]
		}
		r, err := audit.ScoreLabel(ch, label, st)
		if err != nil {
			return fail(stderr, c.name, err)
		}
		results = append(results, r)
	}
	if *asJSON {
		b, _ := json.MarshalIndent(results, "", " ")
		fmt.Fprintf(stdout, "%s\n", b)
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "CONDITION\tTSR\tWGP\tVMP\tSTAGES\tEDGE WEIGHT\tMILESTONES\tSTOPPED AT")
	for _, r := range results {
		wgp := fmt.Sprintf("%.3f", r.WGP)
		weight := fmt.Sprintf("%g/%g", r.WeightDone, r.WeightPlanned)
		if r.WGPFallback {
			wgp += "*"
			weight = "none"
		}
		stopped := r.Stopped
		if stopped == "" {
			stopped = "-"
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%s\t%.3f\t%d/%d\t%s\t%d/%d (+%d met at start)\t%s\n", r.Label, r.TSR, wgp, r.VMP,
			r.Passed, r.Planned, weight, r.Reached, r.Eligible, r.InitiallySatisfied, stopped)
	}
	tw.Flush()
	for _, r := range results {
		if r.WGPFallback {
			fmt.Fprintf(stdout, "* %s: the chain plans no execution-edge weight; WGP falls back to TSR\n", r.Label)
			break
		}
	}
	for _, r := range results {
		for _, w := range r.Warnings {
			fmt.Fprintf(stdout, "warning: %s: %s\n", r.Label, w)
		}
	}
	return 0
}

func runAuditRetarget(args []string, stdout, stderr io.Writer) int {
	c := commands["audit"]
	fs := newFlagSet(c, stdout, stderr)
	var stores, access multiFlag
	fs.Var(&stores, "store", "a play store with run.json (repeatable; several are also pooled)")
	fs.Var(&access, "access", "the access log of the preceding --store (default: its .mfm/access.jsonl, else run.json's reads_before)")
	asJSON := fs.Bool("json", false, "print the reports as JSON, with every turn")
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	if len(stores) == 0 || fs.NArg() != 0 || len(access) > len(stores) {
		fmt.Fprintln(stderr, "mfmd audit retarget: want one or more --store DIR (each optionally with --access FILE)")
		return 2
	}
	var reps []audit.RetargetReport
	for i, st := range stores {
		acc := ""
		if i < len(access) {
			acc = access[i]
		}
		r, err := audit.Retarget(st, acc)
		if err != nil {
			return fail(stderr, c.name+" retarget", err)
		}
		reps = append(reps, r)
	}
	if len(reps) > 1 {
		reps = append(reps, audit.PoolRetarget(reps))
	}
	if *asJSON {
		b, _ := json.MarshalIndent(reps, "", " ")
		fmt.Fprintf(stdout, "%s\n", b)
		return 0
	}
	for i, r := range reps {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		printRetarget(stdout, r)
	}
	return 0
}

func printRetarget(stdout io.Writer, r audit.RetargetReport) {
	fmt.Fprintf(stdout, "%s (task %s): %d turns; reads from %s\n", r.Store, r.Task, r.Turns, r.ReadsFrom)
	fmt.Fprintf(stdout, "retarget (the plan names a go_to/look_at block the running plan did not):\n")
	fmt.Fprintf(stdout, "  after opening a stored frame  %d of %d turns (%s)\n", r.Frame.Retargets, r.Frame.Turns, pct(r.Frame.Rate, r.Frame.Turns))
	fmt.Fprintf(stdout, "  after opening no image        %d of %d turns (%s)\n", r.NoImage.Retargets, r.NoImage.Turns, pct(r.NoImage.Rate, r.NoImage.Turns))
	fmt.Fprintf(stdout, "  (turns that opened only another image: %d)\n", r.OnlyOtherImage)
	fmt.Fprintf(stdout, "  Fisher's exact test: p = %.3g two-sided, %.3g one-sided (frame higher)\n", r.FisherTwoSided, r.FisherGreater)
	fmt.Fprintf(stdout, "recall (a new destination within %g blocks of a looked-at episode): %d of %d", audit.RecallRadius, r.Recalls, r.RecallTrials)
	if r.RecallTrials > 0 {
		fmt.Fprintf(stdout, " against a %.0f%% position-only null, binomial p = %.3g", r.NullMean*100, r.BinomialP)
	}
	fmt.Fprintln(stdout)
	if r.Reach.Reads > 0 {
		fmt.Fprintf(stdout, "reach of %d reads of stored episodes: median %g steps back, mean %.1f, max %d\n", r.Reach.Reads, r.Reach.Median, r.Reach.Mean, r.Reach.Max)
	} else {
		fmt.Fprintln(stdout, "reach: no stored episode was read before a plan")
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(stdout, "warning: %s\n", w)
	}
}

// pct prints a rate, or "-" for an empty group.
func pct(rate float64, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", rate*100)
}
