package consolidate

import (
	"bytes"
	"fmt"
	"path"
	"path/filepath"
	"strings"

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
	all           []Resolved // every citation, for Under
}

// Check checks the mine/ of store s, resolving citations with rs (one
// Resolver keeps what it read of the indexes between calls).
func Check(s *episodes.Store, rs *Resolver) (*CheckReport, error) {
	cs, err := rs.Citations()
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	r := &CheckReport{Citations: len(cs), all: cs}
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

// Under is the part of the report about the file or directory rel of
// mine/ ("mine/notes.md", "mine/procedures"; "mine" or "" is the whole
// report): its citations, and the procedures when rel is or holds
// mine/procedures/ or is inside it.
func (r *CheckReport) Under(rel string) *CheckReport {
	rel = strings.Trim(path.Clean("/"+filepath.ToSlash(rel)), "/")
	if rel == "" || rel == episodes.MineDir {
		return r
	}
	in := func(f string) bool { return f == rel || strings.HasPrefix(f, rel+"/") }
	out := &CheckReport{}
	for _, c := range r.all {
		if in(filepath.ToSlash(c.File)) {
			out.all = append(out.all, c)
			out.Citations++
			if c.Missing != "" {
				out.Missing = append(out.Missing, c)
			}
		}
	}
	procs := episodes.MineDir + "/procedures"
	whole := in(procs) // rel is mine/procedures or holds it
	for i, f := range r.NoDescription {
		if whole || in(f) {
			out.NoDescription = append(out.NoDescription, f)
			out.noDescNames = append(out.noDescNames, r.noDescNames[i])
		}
	}
	if whole {
		out.BadProcedures = r.BadProcedures
	}
	return out
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
	others, unchecked := 0, 0
	for _, c := range r.all {
		if c.Agent != "" {
			others++
		}
		if c.Unchecked {
			unchecked++
		}
	}
	fmt.Fprintf(&b, "%d citation(s), %d to missing episodes", r.Citations, len(r.Missing))
	if others > 0 {
		fmt.Fprintf(&b, ", %d to other agents' episodes", others)
		if unchecked > 0 {
			fmt.Fprintf(&b, " (%d not checked: no shared mount here)", unchecked)
		}
	}
	fmt.Fprintf(&b, "; %d procedure(s) without a description\n", len(r.NoDescription))
	return b.Bytes()
}
