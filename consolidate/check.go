package consolidate

import (
	"bytes"
	"fmt"
	"path/filepath"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/harness"
)

// CheckReport is what is wrong in mine/: citations of episodes that do
// not exist, procedures without a description and procedures that do not
// load (`mfmd check`, the mount's mine/.check).
type CheckReport struct {
	Citations     int        // citations found in mine/
	Missing       []Resolved // the citations naming no episode, in file order
	NoDescription []string   // mine/procedures/FILE of each procedure without a description
	noDescNames   []string   // their procedure names
	BadProcedures []string   // procedures that do not load, with why
}

// Check checks the mine/ of store s, resolving citations with rs (one
// Resolver keeps what it read of the indexes between calls).
func Check(s *episodes.Store, rs *Resolver) (*CheckReport, error) {
	cs, err := rs.Citations()
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	r := &CheckReport{Citations: len(cs)}
	for _, c := range cs {
		if c.Missing != "" {
			r.Missing = append(r.Missing, c)
		}
	}
	procs, bad, err := harness.ListProcedures(s.Path(episodes.MineDir, "procedures"), harness.KindProcedure)
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	for _, p := range procs {
		if p.Description == "" {
			r.NoDescription = append(r.NoDescription, episodes.MineDir+"/procedures/"+filepath.Base(p.Path))
			r.noDescNames = append(r.noDescNames, p.Name)
		}
	}
	for _, e := range bad {
		r.BadProcedures = append(r.BadProcedures, e.Error())
	}
	return r, nil
}

// Text is the report as `mfmd check` prints it: one line per finding
// ("mine/notes.md:3: \"ep_000999\": episode ep_000999 does not exist in
// life 1"), then a summary line.
func (r *CheckReport) Text() []byte {
	var b bytes.Buffer
	for _, c := range r.Missing {
		fmt.Fprintf(&b, "%s:%d: %q: %s\n", c.File, c.Line, c.Text, c.Missing)
	}
	for i, f := range r.NoDescription {
		fmt.Fprintf(&b, "%s: procedure %s has no description (want a first comment or docstring line)\n", f, r.noDescNames[i])
	}
	for _, e := range r.BadProcedures {
		fmt.Fprintf(&b, "mine/procedures: %s\n", e)
	}
	fmt.Fprintf(&b, "%d citation(s), %d to missing episodes; %d procedure(s) without a description\n", r.Citations, len(r.Missing), len(r.NoDescription))
	return b.Bytes()
}
