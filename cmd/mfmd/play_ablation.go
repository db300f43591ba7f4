package main

import (
	"fmt"
	"strings"

	mfmfs "github.com/mfm-project/mfm/fs"
)

// playAblation is what `mfmd play --ablate LIST` switches off
// (docs/EVAL.md, the ablations of MFM Table 4).
type playAblation struct {
	Mount  mfmfs.Ablation // what the mount hides
	Direct bool           // no memory at all: no mount, the agent's memory directory is empty
}

// ablationNames are the switches of --ablate.
var ablationNames = []string{"no-observations", "flat", "no-procedures", "direct"}

// parseAblation parses a comma-separated list of ablationNames.
func parseAblation(s string) (playAblation, error) {
	var a playAblation
	for _, name := range strings.Split(s, ",") {
		switch strings.TrimSpace(name) {
		case "":
		case "no-observations":
			a.Mount.NoObservations = true
		case "flat":
			a.Mount.Flat = true
		case "no-procedures":
			a.Mount.NoProcedures = true
		case "direct":
			a.Direct = true
		default:
			return a, fmt.Errorf("--ablate %q: unknown switch %q (want some of %s)", s, name, strings.Join(ablationNames, ", "))
		}
	}
	if a.Direct && a.Mount.Active() {
		return a, fmt.Errorf("--ablate %q: direct has no memory to hide parts of; give it alone", s)
	}
	return a, nil
}
