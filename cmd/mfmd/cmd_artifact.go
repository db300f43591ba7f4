package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/mfm-project/mfm/artifact"
	"github.com/mfm-project/mfm/episodes"
)

func init() {
	register(&command{
		name:    "artifact",
		summary: "export, verify or show a frozen memory artifact (mine/, optionally chosen episodes)",
		usage: `export --store DIR [--include mine,episodes:QUERY] -o A.tar
       mfmd artifact verify A.tar
       mfmd artifact show A.tar
       mfmd artifact provenance --store DIR [--json]

export  writes a deterministic tar: manifest.json (sha256 of every file, source
        store id, lives, steps, episodes, time, the include declaration), then
        the files. Default --include mine: nothing else crosses unless declared.
        episodes:QUERY selects episodes (e.g. episodes:tag:milestone,
        episodes:all, episodes:action:go_to steps:0..5000 last:20).
verify  checks every file against the manifest; a mismatch exits 1 naming it.
show    prints the manifest.
provenance  prints what a store was seeded from (mfm-store.json "from"), as
        the mount's README.md shows it; --json prints the record itself.
Seed a store from an artifact with: mfmd init --from-artifact A.tar DIR.
The format is in docs/ARTIFACTS.md.`,
		run: runArtifact,
	})
}

func runArtifact(args []string, stdout, stderr io.Writer) int {
	c := commands["artifact"]
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
	store := fs.String("store", "", "export: store directory")
	include := fs.String("include", "mine", "export: what crosses: mine, episodes:QUERY, or both comma-separated")
	out := fs.String("o", "", "export: output archive")
	asJSON := fs.Bool("json", false, "provenance: print the JSON record")
	pos, code, done := parseInterleaved(fs, args[1:], stdout)
	if done {
		return code
	}
	switch sub {
	case "export":
		if *store == "" || *out == "" || len(pos) != 0 {
			fmt.Fprintln(stderr, "mfmd artifact export: want --store DIR -o A.tar")
			return 2
		}
		return artifactExport(*store, *out, *include, stdout, stderr)
	case "provenance":
		if *store == "" || len(pos) != 0 {
			fmt.Fprintln(stderr, "mfmd artifact provenance: want --store DIR")
			return 2
		}
		return artifactProvenance(*store, *asJSON, stdout, stderr)
	case "verify", "show":
		if len(pos) != 1 {
			fmt.Fprintf(stderr, "mfmd artifact %s: want one archive\n", sub)
			return 2
		}
		if sub == "show" {
			return artifactShow(pos[0], stdout, stderr)
		}
		return artifactVerify(pos[0], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "mfmd artifact: unknown subcommand %q (want export, verify, show or provenance)\n", sub)
		return 2
	}
}

// artifactExport writes store's artifact to out and summarises it.
func artifactExport(store, out, include string, stdout, stderr io.Writer) int {
	s, err := episodes.Open(store)
	if err != nil {
		return fail(stderr, "artifact", err)
	}
	m, err := artifact.ExportFile(s, out, artifact.ExportOptions{Include: include})
	if err != nil {
		return fail(stderr, "artifact", err)
	}
	fmt.Fprintf(stdout, "exported %s: include %s; %d files (%d bytes): %d in mine/, %d episodes from lives %v; source store %q: %d lives, %d episodes, %d steps\n",
		out, m.Include, m.Contains.Files, m.Contains.Bytes, m.Contains.Mine, m.Contains.Episodes, m.Contains.Lives, m.Source.StoreID, m.Source.Lives, m.Source.Episodes, m.Source.Steps)
	for _, sk := range m.Skipped {
		fmt.Fprintln(stderr, "skipped: "+sk)
	}
	return 0
}

// artifactProvenance prints which artifact store was seeded from.
func artifactProvenance(store string, asJSON bool, stdout, stderr io.Writer) int {
	p, err := artifact.ReadProvenance(store)
	if err != nil {
		return fail(stderr, "artifact", err)
	}
	if asJSON {
		b, _ := json.MarshalIndent(p, "", " ")
		fmt.Fprintf(stdout, "%s\n", b)
		return 0
	}
	fmt.Fprint(stdout, p.Markdown())
	return 0
}

// artifactShow prints an archive's manifest.
func artifactShow(archive string, stdout, stderr io.Writer) int {
	m, err := artifact.ReadManifest(archive)
	if err != nil {
		return fail(stderr, "artifact", err)
	}
	b, _ := json.MarshalIndent(m, "", " ")
	fmt.Fprintf(stdout, "%s\n", b)
	return 0
}

// artifactVerify checks every file of an archive against its manifest.
func artifactVerify(archive string, stdout, stderr io.Writer) int {
	rep, err := artifact.Verify(archive, artifact.Limits{})
	if err != nil {
		return fail(stderr, "artifact", err)
	}
	if err := rep.Err(); err != nil {
		for _, p := range rep.Problems {
			fmt.Fprintf(stderr, "%s: %s\n", p.Path, p.Reason)
		}
		return fail(stderr, "artifact", fmt.Errorf("%s: %w", archive, err))
	}
	fmt.Fprintf(stdout, "%s: ok, %d files match the manifest (manifest sha256 %s)\n", archive, rep.Checked, rep.ManifestSHA256)
	return 0
}
