package eval

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/mfm-project/mfm/audit"
)

// Report file names under OUT/report/.
const (
	ReportName     = "report.md"
	MilestonesPlot = "milestones.png"
	ContrastsPlot  = "contrasts.png"
)

// arm is one row of the report: the target results of one condition or
// ablation, by seed.
type arm struct {
	name     string
	cond     string // its condition
	baseline string // the arm its paired contrasts are against ("" for none)
	runs     map[int64]RunScore
	skipped  string
}

// arms groups the target results by arm, in plan order, with their
// scores (audit's against the chain when the config has one).
func arms(c *Config, out string, results []Result) []*arm {
	var as []*arm
	byName := map[string]*arm{}
	for _, res := range results {
		u := res.Unit
		if u.Kind != KindTarget {
			continue
		}
		a := byName[u.Arm()]
		if a == nil {
			a = &arm{name: u.Arm(), cond: u.Condition, runs: map[int64]RunScore{}}
			switch {
			case u.Ablation != "":
				a.baseline = u.Condition
			case u.Condition != NoPrior && slices.Contains(c.Conditions, NoPrior):
				a.baseline = NoPrior
			}
			byName[a.name] = a
			as = append(as, a)
		}
		if res.Status != "ok" {
			a.skipped = res.Why
			continue
		}
		a.runs[u.Seed] = RunScore{Result: res, Score: ScoreOf(res), Audit: c.auditOf(out, res)}
	}
	for _, a := range as {
		if b := byName[a.baseline]; b == nil || len(b.runs) == 0 {
			a.baseline = ""
		}
	}
	return as
}

func (a *arm) metric(m Metric) map[int64]float64 { return byMetric(a.runs, m) }

// refused counts the arm's runs without an audit score.
func (a *arm) refused() int {
	n := 0
	for _, r := range a.runs {
		if r.Audit != nil && r.Audit.Scores == nil {
			n++
		}
	}
	return n
}

func values(m map[int64]float64) []float64 {
	var seeds []int64
	for s := range m {
		seeds = append(seeds, s)
	}
	slices.Sort(seeds)
	out := make([]float64, len(seeds))
	for i, s := range seeds {
		out[i] = m[s]
	}
	return out
}

var metricDone = Metric{Name: "done", Prec: 2, Of: func(r RunScore) (float64, bool) {
	if r.Score.Done {
		return 1, true
	}
	return 0, true
}}

// fmtSummary prints "mean ± std [low, high]".
func fmtSummary(s Summary, prec int) string {
	if s.N == 0 {
		return "–"
	}
	out := fmt.Sprintf("%.*f ± %.*f", prec, s.Mean, prec, s.Std)
	if s.HasInterval {
		out += fmt.Sprintf(" [%.*f, %.*f]", prec, s.Low, prec, s.High)
	}
	return out
}

// reportMetrics are the metrics the report's tables and contrasts show.
func (c *Config) reportMetrics() []Metric {
	if c.chain == nil {
		return []Metric{MetricShareTSR, MetricSteps}
	}
	return []Metric{MetricTSR, MetricWGP, MetricVMP, MetricSteps}
}

// WriteReport writes OUT/report/report.md and its plots from the results.
func WriteReport(c *Config, out string, results []Result) error {
	dir := filepath.Join(out, "report")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	as := arms(c, out, results)
	ms := c.reportMetrics()
	var b strings.Builder
	fmt.Fprintf(&b, "# Experiment %s\n\n", c.Name)
	fmt.Fprintf(&b, "World %s, world seed %d, agent seeds %v (paired: every arm runs once per seed). Target: %s. ",
		c.World, c.WorldSeed, c.Seeds, strings.Join(c.Target, " → "))
	if len(c.Related) > 0 {
		fmt.Fprintf(&b, "Related source: %s; shuffled: %s. ", strings.Join(c.Related, " → "), strings.Join(c.Source(Shuffled), " → "))
	}
	if len(c.Unrelated) > 0 {
		fmt.Fprintf(&b, "Unrelated source: %s. ", strings.Join(c.Unrelated, " → "))
	}
	fmt.Fprintf(&b, "Each source plays %d environment steps, its mine/ is frozen into an artifact, and the target plays on a fresh world with mine/ read-only. Agent: `%s`.", c.SourceSteps, c.AgentCmd)
	if c.ConsolidateEvery > 0 {
		fmt.Fprintf(&b, " Every play, sources and targets, consolidates into mine/knowledge/ every %d turns and at its end (`mfmd play --consolidate-every %d`), except the direct arm and the no-consolidation arm, which plays its own source and its target with the knowledge store's offers (`--adapt`) but no consolidation.", c.ConsolidateEvery, c.ConsolidateEvery)
	} else {
		b.WriteString(" No play consolidates (no `consolidate_every`).")
	}
	b.WriteString("\n\n")
	if c.chain != nil {
		fmt.Fprintf(&b, "Metrics as MC-EvoBench appendix C defines them, from `audit.Score` on each target run's store against the chain `%s` (%s, %d stages, sha256 %s): "+
			"**TSR** is the stages passed over those planned, each stage within its step cap and the chain stopping at its first failing stage; "+
			"**WGP** the execution-edge (requires, produces, consumes) weight of the passed stages over the planned weight (TSR where the chain plans none); "+
			"**VMP** the item and tool states of the reported stages reached, over those not already met in the run's first snapshot. "+
			"A run whose store cannot support a score is refused, listed with the reason and left out of every mean. "+
			"Steps are environment steps used (run.json); done is the fraction of runs whose plays all ended done. ",
			c.chain.Name, c.Chain, len(c.chain.Stages), short(c.chainSHA))
	} else {
		b.WriteString("No audit chain is configured: TSR is the run.json milestone share (the milestones reached over those planned across the target sequence; an ordered task stops at its first unreached milestone), and WGP and VMP are not computed. " +
			"Steps are environment steps used; done is the fraction of runs that reached every milestone. ")
	}
	b.WriteString("Values are mean ± standard deviation over seeds with the 95% t-interval of the mean in brackets; contrasts are paired differences per seed, their mean with the 95% Student-t interval.\n\n")

	// the summary table
	b.WriteString("| arm | runs |")
	if c.chain != nil {
		b.WriteString(" refused |")
	}
	for _, m := range ms {
		fmt.Fprintf(&b, " %s |", m.Name)
	}
	b.WriteString(" done |\n|" + strings.Repeat(" --- |", len(ms)+3+boolInt(c.chain != nil)) + "\n")
	for _, a := range as {
		if a.skipped != "" && len(a.runs) == 0 {
			fmt.Fprintf(&b, "| %s | 0 | skipped: %s |%s\n", a.name, a.skipped, strings.Repeat(" |", len(ms)+boolInt(c.chain != nil)))
			continue
		}
		fmt.Fprintf(&b, "| %s | %d |", a.name, len(a.runs))
		if c.chain != nil {
			fmt.Fprintf(&b, " %d |", a.refused())
		}
		for _, m := range ms {
			fmt.Fprintf(&b, " %s |", fmtSummary(Summarize(values(a.metric(m))), m.Prec))
		}
		fmt.Fprintf(&b, " %s |\n", fmtSummary(Summarize(values(a.metric(metricDone))), 2))
	}

	// the transfer contrasts
	conds := map[string]map[int64]RunScore{}
	for _, a := range as {
		if a.name == a.cond && len(a.runs) > 0 {
			conds[a.cond] = a.runs
		}
	}
	if len(conds) > 1 {
		b.WriteString("\n## Transfer contrasts\n\n")
		b.WriteString("Paired per seed against no-prior (MC-EvoBench eq. D.1): ΔR = related − no-prior, ΔU = unrelated − no-prior, ΔS = shuffled − no-prior; GATG = related − (unrelated + shuffled)/2 (section 4.4). Mean [95% t-interval] over the seeds scored under every condition compared.\n\n")
		b.WriteString("| metric | seeds | ΔR | ΔU | ΔS | GATG |\n| --- | --- | --- | --- | --- | --- |\n")
		for _, m := range ms {
			tc := transferContrasts(conds, m)
			if tc.Err != "" {
				fmt.Fprintf(&b, "| %s | – | %s | | | |\n", m.Name, tc.Err)
				continue
			}
			cell := func(cond string, t func(*audit.Transfer) audit.Contrast) string {
				if tc.Transfer != nil {
					return fmtContrast(t(tc.Transfer), m.Prec)
				}
				if d, ok := tc.Partial[cond]; ok {
					return fmtContrast(d, m.Prec)
				}
				return "–"
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s |\n", m.Name, len(tc.Seeds),
				cell(Related, func(t *audit.Transfer) audit.Contrast { return t.DeltaR }),
				cell(Unrelated, func(t *audit.Transfer) audit.Contrast { return t.DeltaU }),
				cell(Shuffled, func(t *audit.Transfer) audit.Contrast { return t.DeltaS }),
				cell("", func(t *audit.Transfer) audit.Contrast { return t.GATG }))
		}
	}

	// the ablations against their condition
	var abl []*arm
	for _, a := range as {
		if a.name != a.cond && a.baseline != "" && len(a.runs) > 0 {
			abl = append(abl, a)
		}
	}
	if len(abl) > 0 {
		b.WriteString("\n## Ablations\n\nPaired per seed: the ablation arm − its condition with the full memory. Mean [95% t-interval] over the seeds scored in both.\n\n")
		b.WriteString("| arm | baseline | seeds |")
		for _, m := range ms {
			fmt.Fprintf(&b, " Δ%s |", m.Name)
		}
		b.WriteString("\n|" + strings.Repeat(" --- |", len(ms)+3) + "\n")
		for _, a := range abl {
			base := armByName(as, a.baseline)
			cells := make([]string, len(ms))
			n := 0
			for i, m := range ms {
				d, seeds, err := pairedContrast(a.runs, base.runs, m)
				if err != nil {
					cells[i] = err.Error()
					continue
				}
				n = max(n, len(seeds))
				cells[i] = fmtContrast(d, m.Prec)
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s |\n", a.name, a.baseline, n, strings.Join(cells, " | "))
		}
	}

	fmt.Fprintf(&b, "\n![milestones reached over steps](%s)\n\n![paired contrasts](%s)\n", MilestonesPlot, ContrastsPlot)
	for _, a := range as {
		fmt.Fprintf(&b, "\n## %s\n\n", a.name)
		if len(a.runs) == 0 {
			fmt.Fprintf(&b, "Not run: %s.\n", a.skipped)
			continue
		}
		if c.chain != nil {
			b.WriteString("| seed | milestones (run.json) | TSR | WGP | VMP | stopped at | steps | termination | source steps | artifact sha256 |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
		} else {
			b.WriteString("| seed | milestones | TSR | steps | termination | source steps | artifact sha256 |\n| --- | --- | --- | --- | --- | --- | --- |\n")
		}
		var refusals []string
		for _, s := range sortedSeeds(a.runs) {
			r := a.runs[s]
			res, sc := r.Result, r.Score
			var terms []string
			for _, p := range res.Runs {
				terms = append(terms, p.Termination)
			}
			sha := short(res.Provenance.ArtifactSHA256)
			if sha == "" {
				sha = "(empty memory)"
			}
			if c.chain == nil {
				fmt.Fprintf(&b, "| %d | %d of %d | %.3f | %d | %s | %d | %s |\n", s, sc.Reached, sc.Planned, sc.TSR, sc.Steps, strings.Join(terms, ", "), res.Provenance.SourceSteps, sha)
				continue
			}
			scores := "refused (below) | | |"
			stopped := ""
			if au := r.Audit.Scores; au != nil {
				scores = fmt.Sprintf("%.3f (%d of %d) | %.3f | %.3f (%d of %d) |", au.TSR, au.Passed, au.Planned, au.WGP, au.VMP, au.Reached, au.Eligible)
				if au.WGPFallback {
					scores = strings.Replace(scores, fmt.Sprintf("| %.3f |", au.WGP), fmt.Sprintf("| %.3f (TSR: no edges) |", au.WGP), 1)
				}
				stopped = au.Stopped
				if stopped == "" {
					stopped = "–"
				}
			} else {
				refusals = append(refusals, fmt.Sprintf("seed %d: %s", s, r.Audit.Refused))
			}
			fmt.Fprintf(&b, "| %d | %d of %d | %s %s | %d | %s | %d | %s |\n", s, sc.Reached, sc.Planned, scores, stopped, sc.Steps, strings.Join(terms, ", "), res.Provenance.SourceSteps, sha)
		}
		if len(refusals) > 0 {
			b.WriteString("\nRefused (no score):\n\n")
			for _, r := range refusals {
				fmt.Fprintf(&b, "- %s\n", r)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ReportName), []byte(b.String()), 0o644); err != nil {
		return err
	}
	if err := milestonesPlot(as, filepath.Join(dir, MilestonesPlot)); err != nil {
		return fmt.Errorf("plot milestones: %w", err)
	}
	if err := contrastsPlot(c, as, filepath.Join(dir, ContrastsPlot)); err != nil {
		return fmt.Errorf("plot contrasts: %w", err)
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func armByName(as []*arm, name string) *arm {
	for _, a := range as {
		if a.name == name {
			return a
		}
	}
	return nil
}

func sortedSeeds[V any](m map[int64]V) []int64 {
	var out []int64
	for s := range m {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// milestonesPlot draws, per arm, the mean number of milestones reached
// by each step.
func milestonesPlot(as []*arm, path string) error {
	p := plot.New()
	p.Title.Text = "Milestones reached over environment steps (mean over seeds)"
	p.X.Label.Text = "environment steps"
	p.Y.Label.Text = "milestones reached"
	maxStep := 1
	for _, a := range as {
		for _, r := range a.runs {
			maxStep = max(maxStep, r.Score.Steps)
		}
	}
	i := 0
	for _, a := range as {
		if len(a.runs) == 0 {
			continue
		}
		var curves [][]int
		for _, s := range sortedSeeds(a.runs) {
			curves = append(curves, Curve(a.runs[s].Result))
		}
		pts := make(plotter.XYs, 0, maxStep+1)
		for x := 0; x <= maxStep; x++ {
			sum := 0
			for _, c := range curves {
				sum += reachedBy(c, x)
			}
			pts = append(pts, plotter.XY{X: float64(x), Y: float64(sum) / float64(len(curves))})
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(a.name, l)
		i++
	}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Y.Max = p.Y.Max*1.5 + 0.1 // room for the legend above the curves
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}

// contrastPoints are the contrasts' means with their intervals.
type contrastPoints struct {
	plotter.XYs
	plotter.YErrors
}

// plotContrast is one labelled contrast of the plot, per metric.
type plotContrast struct {
	label string
	by    map[string]audit.Contrast // metric name → contrast
}

// plotContrasts lists the report's contrasts: ΔR, ΔU, ΔS and GATG (or the
// conditions against no-prior), then each ablation against its condition.
func plotContrasts(as []*arm, ms []Metric) []plotContrast {
	var out []plotContrast
	conds := map[string]map[int64]RunScore{}
	for _, a := range as {
		if a.name == a.cond && len(a.runs) > 0 {
			conds[a.cond] = a.runs
		}
	}
	labels := []struct {
		name, cond string
		pick       func(*audit.Transfer) audit.Contrast
	}{
		{"ΔR related − no-prior", Related, func(t *audit.Transfer) audit.Contrast { return t.DeltaR }},
		{"ΔU unrelated − no-prior", Unrelated, func(t *audit.Transfer) audit.Contrast { return t.DeltaU }},
		{"ΔS shuffled − no-prior", Shuffled, func(t *audit.Transfer) audit.Contrast { return t.DeltaS }},
		{"GATG", "", func(t *audit.Transfer) audit.Contrast { return t.GATG }},
	}
	tcs := map[string]TransferContrasts{}
	for _, m := range ms {
		tcs[m.Name] = transferContrasts(conds, m)
	}
	for _, l := range labels {
		pc := plotContrast{label: l.name, by: map[string]audit.Contrast{}}
		for _, m := range ms {
			tc := tcs[m.Name]
			switch {
			case tc.Transfer != nil:
				pc.by[m.Name] = l.pick(tc.Transfer)
			case tc.Partial != nil && l.cond != "":
				if d, ok := tc.Partial[l.cond]; ok {
					pc.by[m.Name] = d
				}
			}
		}
		if len(pc.by) > 0 {
			out = append(out, pc)
		}
	}
	for _, a := range as {
		if a.name == a.cond || a.baseline == "" || len(a.runs) == 0 {
			continue
		}
		base := armByName(as, a.baseline)
		pc := plotContrast{label: a.name + " − " + a.baseline, by: map[string]audit.Contrast{}}
		for _, m := range ms {
			if d, _, err := pairedContrast(a.runs, base.runs, m); err == nil {
				pc.by[m.Name] = d
			}
		}
		if len(pc.by) > 0 {
			out = append(out, pc)
		}
	}
	return out
}

// contrastsPlot draws the paired contrasts of the report's rate metrics
// (TSR, WGP, VMP with a chain; the milestone share without) with their
// 95% t-intervals, one colour per metric.
func contrastsPlot(c *Config, as []*arm, path string) error {
	var ms []Metric
	for _, m := range c.reportMetrics() {
		if m.Name != MetricSteps.Name {
			ms = append(ms, m)
		}
	}
	p := plot.New()
	p.Title.Text = "Paired contrasts (mean, 95% t-interval)"
	p.Y.Label.Text = "difference"
	pcs := plotContrasts(as, ms)
	if len(pcs) == 0 {
		p.Title.Text += ": none (no baseline arm)"
		return p.Save(8*vg.Inch, 5*vg.Inch, path)
	}
	zero := plotter.NewFunction(func(float64) float64 { return 0 })
	zero.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
	p.Add(zero, plotter.NewGrid())
	width := 0.6 / float64(len(ms))
	for mi, m := range ms {
		var pts contrastPoints
		for i, pc := range pcs {
			d, ok := pc.by[m.Name]
			if !ok {
				continue
			}
			lo, hi := 0.0, 0.0
			if d.N >= 2 && !math.IsNaN(d.Lo) {
				lo, hi = d.Mean-d.Lo, d.Hi-d.Mean
			}
			x := float64(i) + (float64(mi)-float64(len(ms)-1)/2)*width
			pts.XYs = append(pts.XYs, plotter.XY{X: x, Y: d.Mean})
			pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{lo, hi})
		}
		if len(pts.XYs) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts.XYs)
		if err != nil {
			return err
		}
		sc.Color = plotutil.Color(mi)
		sc.Shape = plotutil.Shape(mi)
		eb, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return err
		}
		eb.Color = plotutil.Color(mi)
		p.Add(sc, eb)
		p.Legend.Add(m.Name, sc)
	}
	names := make([]string, len(pcs))
	for i, pc := range pcs {
		names[i] = pc.label
	}
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = math.Pi / 8
	p.X.Tick.Label.XAlign = -1
	p.Legend.Top = true
	p.Y.Min = math.Min(p.Y.Min, -0.1)
	p.Y.Max = math.Max(p.Y.Max, 0.1)
	return p.Save(10*vg.Inch, 5*vg.Inch, path)
}
