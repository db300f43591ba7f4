package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/mfm-project/mfm/consolidate"
	"github.com/mfm-project/mfm/episodes"
)

func init() {
	register(&command{
		name:    "consolidate",
		summary: "typed feedback, candidate skills and remedies, digest (docs/CONSOLIDATE.md)",
		usage: "--store DIR [--static-k] [--apply] [--llm-cmd CMD [--llm-timeout D]] | --store DIR [--static-k] --retrieve CONTEXT\n\n" +
			"Writes .mfm/consolidate/{feedback.jsonl,digest.md,rejected.jsonl,state.json,candidates/}\n" +
			"and the persistent knowledge store mine/knowledge/knowledge.json, read back on every run:\n" +
			"accepted candidates are merged into it or inserted, entries superseded or retired with\n" +
			"the reason kept. --static-k freezes it (read and checked against, never written).\n" +
			"Never changes the record. --apply also writes each accepted candidate as a new file\n" +
			"mine/consolidated/<id>.md citing its episodes. --llm-cmd sends the induce and curate\n" +
			"prompts on stdin to `sh -c CMD` and validates its JSON answers with the same curator;\n" +
			"a failing or timed-out command or a malformed answer is an error and nothing is written.\n" +
			"--retrieve CONTEXT (e.g. call=go_to,failure=NAV_STUCK,budget=300) prints the accepted\n" +
			"entries chosen for it under the budget, as /consolidate/retrieve/CONTEXT does, records\n" +
			"the retrieval in .mfm/consolidate/usage.jsonl and writes nothing else. Retrieval chooses\n" +
			"from the active entries of the knowledge store.",
		run: runConsolidate,
	})
}

func runConsolidate(args []string, stdout, stderr io.Writer) int {
	c := commands["consolidate"]
	fs := newFlagSet(c, stdout, stderr)
	dir := fs.String("store", "", "store directory")
	apply := fs.Bool("apply", false, "write accepted candidates into mine/consolidated/")
	llm := fs.String("llm-cmd", "", "language-model command (prompt on stdin, JSON on stdout)")
	llmTimeout := fs.Duration("llm-timeout", consolidate.DefaultLLMTimeout, "bound on each --llm-cmd call")
	retrieve := fs.String("retrieve", "", "print the retrieval for a context and record it in usage.jsonl")
	staticK := fs.Bool("static-k", false, "freeze the knowledge store mine/knowledge/ (the static-store ablation)")
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	if *dir == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "mfmd consolidate: want --store DIR and no arguments")
		return 2
	}
	s, err := episodes.Open(*dir)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	cfg := consolidate.DefaultConfig()
	cfg.StaticK = *staticK
	if *retrieve != "" {
		if *apply || *llm != "" {
			fmt.Fprintln(stderr, "mfmd consolidate: --retrieve takes no --apply or --llm-cmd")
			return 2
		}
		ctx, err := consolidate.ParseContext(*retrieve)
		if err != nil {
			return fail(stderr, c.name, err)
		}
		res, err := consolidate.Compute(s, cfg, nil)
		if err != nil {
			return fail(stderr, c.name, err)
		}
		got := consolidate.Retrieve(res.Knowledge(), ctx)
		stdout.Write(consolidate.RenderRetrieval(ctx, got))
		if err := consolidate.LogUsage(s, ctx, got, "cli", time.Now()); err != nil {
			return fail(stderr, c.name, err)
		}
		return 0
	}
	var res *consolidate.Result
	if *llm != "" {
		res, err = consolidate.ComputeLLM(context.Background(), s, cfg, consolidate.LLM{Cmd: *llm, Timeout: *llmTimeout})
	} else {
		res, err = consolidate.Compute(s, cfg, nil)
	}
	if err != nil {
		return fail(stderr, c.name, err)
	}
	for _, n := range res.Notes {
		fmt.Fprintln(stderr, "mfmd consolidate: "+n)
	}
	if err := consolidate.Write(s, res); err != nil {
		return fail(stderr, c.name, err)
	}
	fmt.Fprintf(stdout, "%d episode(s): %d candidate(s) accepted, %d rejected; see %s\n",
		len(res.Feedback), len(res.Accepted), len(res.Rejected), s.Path(consolidate.Dir))
	active, superseded, retired := res.K.Count()
	if cfg.StaticK {
		fmt.Fprintf(stdout, "knowledge store (static, unchanged): %d active, %d superseded, %d retired\n", active, superseded, retired)
	} else {
		if err := consolidate.WriteK(s, res.K); err != nil {
			return fail(stderr, c.name, err)
		}
		fmt.Fprintf(stdout, "knowledge store %s: %d active, %d superseded, %d retired; %d change(s)\n",
			consolidate.KnowledgeFile, active, superseded, retired, len(res.KChanges))
	}
	if *apply {
		done, err := consolidate.Apply(s, res)
		for _, d := range done {
			fmt.Fprintln(stdout, "wrote "+d)
		}
		if err != nil {
			return fail(stderr, c.name, err)
		}
	}
	return 0
}
