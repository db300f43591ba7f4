package eval

// Scoring of target runs with package audit: MC-EvoBench's TSR, WGP and
// VMP (appendix C) on each target run's store against the experiment's
// chain, and the paired contrasts ΔR, ΔU, ΔS and GATG over the seeds.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/mfm-project/mfm/audit"
)

// RunAudit is a target run's scores against the experiment's chain, or
// why its store could not support a score.
type RunAudit struct {
	Chain       string `json:"chain"`        // the chain's name
	ChainSHA256 string `json:"chain_sha256"` // of the chain file it was scored with
	// Scores are audit.Score's (nil when refused).
	Scores *audit.Scores `json:"scores,omitempty"`
	// Refused says why the run has no score.
	Refused string `json:"refused,omitempty"`
}

// loadChain reads the config's chain file (relative to the config).
func (c *Config) loadChain() error {
	if c.Chain == "" {
		return nil
	}
	p := c.Chain
	if !filepath.IsAbs(p) {
		p = filepath.Join(c.dir, p)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("chain: %w", err)
	}
	ch, err := audit.LoadChain(p)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	c.chain, c.chainSHA = ch, hex.EncodeToString(sum[:])
	return nil
}

// AuditChain is the experiment's chain (nil when the config names none).
func (c *Config) AuditChain() *audit.Chain { return c.chain }

// scoreStore scores the target store storeDir against the config's chain;
// a store that cannot support a score is a refusal with its reason.
func (c *Config) scoreStore(label, storeDir string) *RunAudit {
	if c.chain == nil {
		return nil
	}
	ra := &RunAudit{Chain: c.chain.Name, ChainSHA256: c.chainSHA}
	s, err := audit.ScoreLabel(c.chain, label, storeDir)
	if err != nil {
		ra.Refused = err.Error()
		return ra
	}
	ra.Scores = &s
	return ra
}

// auditOf is a target result's audit: the one recorded when it ran if it
// was scored with this chain file, else its store scored now, else a
// refusal saying why there is no score.
func (c *Config) auditOf(out string, res Result) *RunAudit {
	if c.chain == nil {
		return nil
	}
	if res.Audit != nil && res.Audit.ChainSHA256 == c.chainSHA {
		return res.Audit
	}
	store := filepath.Join(res.Unit.dir(out), "store")
	if fi, err := os.Stat(store); err == nil && fi.IsDir() {
		return c.scoreStore(res.Unit.Arm(), store)
	}
	why := "not scored when it ran, and its store is not kept"
	if res.Audit != nil {
		why = "scored with another chain file (sha256 " + short(res.Audit.ChainSHA256) + "), and its store is not kept"
	}
	return &RunAudit{Chain: c.chain.Name, ChainSHA256: c.chainSHA, Refused: why}
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// Metric is one per-run number of the report.
type Metric struct {
	Name string
	Prec int
	// Of is the run's value; ok is false when the run has none (refused).
	Of func(RunScore) (float64, bool)
}

// RunScore is what the report knows of one target run.
type RunScore struct {
	Result Result
	Score  Score     // from run.json
	Audit  *RunAudit // nil without a chain
}

func auditMetric(name string, f func(*audit.Scores) float64) Metric {
	return Metric{Name: name, Prec: 3, Of: func(r RunScore) (float64, bool) {
		if r.Audit == nil || r.Audit.Scores == nil {
			return 0, false
		}
		return f(r.Audit.Scores), true
	}}
}

// The report's metrics: with a chain, TSR, WGP and VMP from audit.Score
// and the steps used; without one, the run.json milestone share and the
// steps.
var (
	MetricTSR      = auditMetric("TSR", func(s *audit.Scores) float64 { return s.TSR })
	MetricWGP      = auditMetric("WGP", func(s *audit.Scores) float64 { return s.WGP })
	MetricVMP      = auditMetric("VMP", func(s *audit.Scores) float64 { return s.VMP })
	MetricSteps    = Metric{Name: "steps", Prec: 1, Of: func(r RunScore) (float64, bool) { return float64(r.Score.Steps), true }}
	MetricShareTSR = Metric{Name: "TSR", Prec: 3, Of: func(r RunScore) (float64, bool) { return r.Score.TSR, true }}
)

// byMetric is an arm's values of metric m by seed (runs without a value
// left out).
func byMetric(runs map[int64]RunScore, m Metric) map[int64]float64 {
	out := map[int64]float64{}
	for s, r := range runs {
		if v, ok := m.Of(r); ok {
			out[s] = v
		}
	}
	return out
}

// commonSeeds are the seeds every map has, in order.
func commonSeeds(ms ...map[int64]float64) []int64 {
	if len(ms) == 0 {
		return nil
	}
	var out []int64
	for s := range ms[0] {
		all := true
		for _, m := range ms[1:] {
			if _, ok := m[s]; !ok {
				all = false
				break
			}
		}
		if all {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

func column(m map[int64]float64, seeds []int64) []float64 {
	out := make([]float64, len(seeds))
	for i, s := range seeds {
		out[i] = m[s]
	}
	return out
}

// TransferContrasts are one metric's paired contrasts between the
// conditions over the seeds all compared arms scored.
type TransferContrasts struct {
	Metric string
	Seeds  []int64
	// Transfer holds ΔR, ΔU, ΔS and GATG when all four conditions ran
	// (audit.Contrasts); otherwise Partial holds the condition − no-prior
	// contrasts of those that did.
	Transfer *audit.Transfer
	Partial  map[string]audit.Contrast
	Err      string // why there is no contrast
}

// transferContrasts computes metric m's contrasts from the conditions'
// runs (by condition name, then seed).
func transferContrasts(conds map[string]map[int64]RunScore, m Metric) TransferContrasts {
	tc := TransferContrasts{Metric: m.Name}
	np, ok := conds[NoPrior]
	if !ok {
		tc.Err = "no no-prior arm"
		return tc
	}
	vals := map[string]map[int64]float64{NoPrior: byMetric(np, m)}
	var others []string
	for _, c := range Conditions[1:] {
		if runs, ok := conds[c]; ok {
			vals[c] = byMetric(runs, m)
			others = append(others, c)
		}
	}
	if len(others) == 0 {
		tc.Err = "no condition besides no-prior"
		return tc
	}
	if len(others) == 3 {
		tc.Seeds = commonSeeds(vals[NoPrior], vals[Related], vals[Unrelated], vals[Shuffled])
		if len(tc.Seeds) == 0 {
			tc.Err = "no seed scored under all four conditions"
			return tc
		}
		t, err := audit.Contrasts(column(vals[NoPrior], tc.Seeds), column(vals[Related], tc.Seeds),
			column(vals[Unrelated], tc.Seeds), column(vals[Shuffled], tc.Seeds))
		if err != nil {
			tc.Err = err.Error()
			return tc
		}
		tc.Transfer = &t
		return tc
	}
	tc.Partial = map[string]audit.Contrast{}
	all := []map[int64]float64{vals[NoPrior]}
	for _, c := range others {
		all = append(all, vals[c])
	}
	tc.Seeds = commonSeeds(all...)
	if len(tc.Seeds) == 0 {
		tc.Err = "no seed scored under every condition"
		return tc
	}
	for _, c := range others {
		d, err := audit.Paired(column(vals[c], tc.Seeds), column(vals[NoPrior], tc.Seeds))
		if err != nil {
			tc.Err = err.Error()
			return tc
		}
		tc.Partial[c] = d
	}
	return tc
}

// pairedContrast is metric m's paired contrast arm − base over the seeds
// both scored.
func pairedContrast(arm, base map[int64]RunScore, m Metric) (audit.Contrast, []int64, error) {
	a, b := byMetric(arm, m), byMetric(base, m)
	seeds := commonSeeds(a, b)
	if len(seeds) == 0 {
		return audit.Contrast{}, nil, errors.New("no seed scored in both arms")
	}
	c, err := audit.Paired(column(a, seeds), column(b, seeds))
	return c, seeds, err
}

// fmtContrast prints "+0.400 [−0.140, 0.940]" (no interval for one seed).
func fmtContrast(c audit.Contrast, prec int) string {
	out := fmt.Sprintf("%+.*f", prec, c.Mean)
	if c.N >= 2 && !math.IsNaN(c.Lo) {
		out += fmt.Sprintf(" [%.*f, %.*f]", prec, c.Lo, prec, c.Hi)
	}
	return out
}
