package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/mfm-project/mfm/eval"
)

func init() {
	register(&command{
		name:    "eval",
		summary: "run an experiment (transfer conditions, ablations, paired seeds) with mfmd play and write its report",
		usage: `--config EXPERIMENT.json [--out DIR] [--report-only]

Runs every source and target of the experiment (docs/EVAL.md) with mfmd play:
each source plays its sequence to the matched step budget and its mine/ is
frozen into an artifact; each target plays on a fresh world with mine/
read-only on that artifact (empty for no-prior), under the ablations the
config names. A finished run is recorded atomically (runs/…/result.json) and
not redone: run the same command again to resume after a crash. The report
(report/report.md, milestones.png, contrasts.png) is written at the end.`,
		run: runEval,
	})
}

func runEval(args []string, stdout, stderr io.Writer) int {
	c := commands["eval"]
	fl := newFlagSet(c, stdout, stderr)
	configPath := fl.String("config", "", "the experiment's config file (required)")
	out := fl.String("out", "", "output directory (default: out/ beside the config)")
	reportOnly := fl.Bool("report-only", false, "write the report from the finished runs without running any")
	mfmd := fl.String("mfmd", "", "the mfmd that plays (default: this one)")
	if code, done := parseFlags(fl, args, stdout); done {
		return code
	}
	if *configPath == "" || fl.NArg() != 0 {
		fmt.Fprintln(stderr, "mfmd eval: need --config EXPERIMENT.json and no other arguments")
		return 2
	}
	cfg, err := eval.LoadConfig(*configPath)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	if *out == "" {
		*out = filepath.Join(filepath.Dir(*configPath), "out")
	}
	outDir, err := filepath.Abs(*out)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	if *mfmd == "" {
		if *mfmd, err = os.Executable(); err != nil {
			return fail(stderr, c.name, err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r := &eval.Runner{Config: cfg, Out: outDir, Mfmd: *mfmd, Progress: stdout}
	var results []eval.Result
	if *reportOnly {
		results, err = eval.Finished(cfg, outDir)
	} else {
		results, err = r.Run(ctx)
	}
	if err != nil {
		fmt.Fprintf(stderr, "mfmd eval: %v\n", err)
		if len(results) == 0 {
			return 1
		}
		fmt.Fprintf(stderr, "mfmd eval: the report covers the %d runs finished so far; run again to resume\n", len(results))
	}
	if rerr := eval.WriteReport(cfg, outDir, results); rerr != nil {
		return fail(stderr, c.name, rerr)
	}
	fmt.Fprintf(stdout, "Report: %s\n", filepath.Join(outDir, "report", eval.ReportName))
	if err != nil {
		return 1
	}
	return 0
}
