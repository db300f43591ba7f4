package eval

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Unit kinds.
const (
	KindSource = "source" // a source sequence played to its step budget, its mine/ frozen
	KindTarget = "target" // the target sequence played read-only on a source's artifact
)

// Unit is one run of an experiment: a source or a target, for one
// condition (and ablation) and one agent seed.
type Unit struct {
	ID        string `json:"id"` // "source/related/seed-1", "target/related+flat/seed-1"
	Kind      string `json:"kind"`
	Condition string `json:"condition"`
	// Ablation is the arm's ablation ("" for the full memory); a source
	// has one only under no-consolidation (sourceKey).
	Ablation string `json:"ablation,omitempty"`
	Seed     int64  `json:"seed"`
	// Source is the ID of the source unit whose artifact a target reads
	// ("" for no-prior).
	Source string `json:"source,omitempty"`
}

// Arm is the unit's arm in the report: the condition, with "+ablation".
func (u Unit) Arm() string {
	if u.Ablation == "" {
		return u.Condition
	}
	return u.Condition + "+" + u.Ablation
}

// dir is the unit's directory under the experiment's output.
func (u Unit) dir(out string) string {
	return filepath.Join(out, "runs", filepath.FromSlash(u.ID))
}

// sourceKey names the source an arm's target reads: its condition's,
// except under no-consolidation, whose source plays without consolidation
// too (the memory it freezes was never consolidated).
func sourceKey(cond, abl string) string {
	if abl == NoConsolidation {
		return cond + "+" + abl
	}
	return cond
}

// Plan lists the experiment's units in the order they run: for each
// seed, the sources its targets need, then the targets (conditions, then
// ablations). Sources come before the targets that read them.
func (c *Config) Plan() []Unit {
	var out []Unit
	for _, seed := range c.Seeds {
		type arm struct{ cond, abl string }
		var arms []arm
		for _, cond := range c.Conditions {
			arms = append(arms, arm{cond, ""})
		}
		for _, a := range c.Ablations {
			arms = append(arms, arm{c.AblationCondition, a})
		}
		sources := map[string]string{}
		for _, a := range arms {
			key := sourceKey(a.cond, a.abl)
			if a.cond == NoPrior || sources[key] != "" {
				continue
			}
			u := Unit{Kind: KindSource, Condition: a.cond, Seed: seed}
			if key != a.cond {
				u.Ablation = a.abl
			}
			u.ID = fmt.Sprintf("source/%s/seed-%d", key, seed)
			sources[key] = u.ID
			out = append(out, u)
		}
		for _, a := range arms {
			u := Unit{Kind: KindTarget, Condition: a.cond, Ablation: a.abl, Seed: seed, Source: sources[sourceKey(a.cond, a.abl)]}
			u.ID = fmt.Sprintf("target/%s/seed-%d", strings.ReplaceAll(u.Arm(), "/", "-"), seed)
			out = append(out, u)
		}
	}
	return out
}
