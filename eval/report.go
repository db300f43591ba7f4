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
	baseline string // the arm its paired contrasts are against ("" for none)
	results  map[int64]Result
	skipped  string
}

// arms groups the target results by arm, in plan order.
func arms(c *Config, results []Result) []*arm {
	var out []*arm
	byName := map[string]*arm{}
	for _, res := range results {
		u := res.Unit
		if u.Kind != KindTarget {
			continue
		}
		a := byName[u.Arm()]
		if a == nil {
			a = &arm{name: u.Arm(), results: map[int64]Result{}}
			switch {
			case u.Ablation != "":
				a.baseline = u.Condition
			case u.Condition != NoPrior && slices.Contains(c.Conditions, NoPrior):
				a.baseline = NoPrior
			}
			byName[a.name] = a
			out = append(out, a)
		}
		if res.Status != "ok" {
			a.skipped = res.Why
			continue
		}
		a.results[u.Seed] = res
	}
	for _, a := range out {
		if b := byName[a.baseline]; b == nil || len(b.results) == 0 {
			a.baseline = ""
		}
	}
	return out
}

func (a *arm) metric(f func(Score) float64) map[int64]float64 {
	out := map[int64]float64{}
	for s, res := range a.results {
		out[s] = f(ScoreOf(res))
	}
	return out
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

func tsr(s Score) float64   { return s.TSR }
func steps(s Score) float64 { return float64(s.Steps) }
func done(s Score) float64 {
	if s.Done {
		return 1
	}
	return 0
}

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

// WriteReport writes OUT/report/report.md and its plots from the results.
func WriteReport(c *Config, out string, results []Result) error {
	dir := filepath.Join(out, "report")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	as := arms(c, results)
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
	fmt.Fprintf(&b, "Each source plays %d environment steps, its mine/ is frozen into an artifact, and the target plays on a fresh world with mine/ read-only. Agent: `%s`.\n\n", c.SourceSteps, c.AgentCmd)
	b.WriteString("Metrics from each run's run.json: TSR is the milestones reached over those planned across the target sequence (an ordered task stops at its first unreached milestone); steps are environment steps used; done is the fraction of runs that reached every milestone. Values are mean ± standard deviation over seeds with the 95% t-interval of the mean in brackets; Δ are paired differences (arm − baseline, per seed) with their 95% t-interval.\n\n")
	b.WriteString("| arm | runs | TSR | steps used | done | baseline | ΔTSR | Δsteps |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, a := range as {
		if a.skipped != "" && len(a.results) == 0 {
			fmt.Fprintf(&b, "| %s | 0 | skipped: %s | | | | | |\n", a.name, a.skipped)
			continue
		}
		dR, dS := "", ""
		if a.baseline != "" {
			base := armByName(as, a.baseline)
			s, _ := Paired(a.metric(tsr), base.metric(tsr))
			dR = fmtSummary(s, 3)
			s, _ = Paired(a.metric(steps), base.metric(steps))
			dS = fmtSummary(s, 1)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", a.name, len(a.results),
			fmtSummary(Summarize(values(a.metric(tsr))), 3), fmtSummary(Summarize(values(a.metric(steps))), 1),
			fmtSummary(Summarize(values(a.metric(done))), 2), a.baseline, dR, dS)
	}
	fmt.Fprintf(&b, "\n![milestones reached over steps](%s)\n\n![paired contrasts](%s)\n", MilestonesPlot, ContrastsPlot)
	for _, a := range as {
		fmt.Fprintf(&b, "\n## %s\n\n", a.name)
		if len(a.results) == 0 {
			fmt.Fprintf(&b, "Not run: %s.\n", a.skipped)
			continue
		}
		b.WriteString("| seed | milestones | TSR | steps | termination | source steps | artifact sha256 |\n| --- | --- | --- | --- | --- | --- | --- |\n")
		for _, s := range sortedSeeds(a.results) {
			res := a.results[s]
			sc := ScoreOf(res)
			var terms []string
			for _, p := range res.Runs {
				terms = append(terms, p.Termination)
			}
			sha := res.Provenance.ArtifactSHA256
			if len(sha) > 12 {
				sha = sha[:12]
			}
			if sha == "" {
				sha = "(empty memory)"
			}
			fmt.Fprintf(&b, "| %d | %d of %d | %.3f | %d | %s | %d | %s |\n", s, sc.Reached, sc.Planned, sc.TSR, sc.Steps, strings.Join(terms, ", "), res.Provenance.SourceSteps, sha)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ReportName), []byte(b.String()), 0o644); err != nil {
		return err
	}
	if err := milestonesPlot(as, filepath.Join(dir, MilestonesPlot)); err != nil {
		return fmt.Errorf("plot milestones: %w", err)
	}
	if err := contrastsPlot(as, filepath.Join(dir, ContrastsPlot)); err != nil {
		return fmt.Errorf("plot contrasts: %w", err)
	}
	return nil
}

func armByName(as []*arm, name string) *arm {
	for _, a := range as {
		if a.name == name {
			return a
		}
	}
	return nil
}

func sortedSeeds(m map[int64]Result) []int64 {
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
		for _, res := range a.results {
			maxStep = max(maxStep, ScoreOf(res).Steps)
		}
	}
	i := 0
	for _, a := range as {
		if len(a.results) == 0 {
			continue
		}
		var curves [][]int
		for _, s := range sortedSeeds(a.results) {
			curves = append(curves, Curve(a.results[s]))
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

// contrastsPlot draws each arm's paired ΔTSR against its baseline with
// its 95% t-interval.
func contrastsPlot(as []*arm, path string) error {
	p := plot.New()
	p.Title.Text = "Paired ΔTSR against the baseline (95% t-interval)"
	p.Y.Label.Text = "ΔTSR"
	var names []string
	var pts contrastPoints
	for _, a := range as {
		if a.baseline == "" || len(a.results) == 0 {
			continue
		}
		s, _ := Paired(a.metric(tsr), armByName(as, a.baseline).metric(tsr))
		if s.N == 0 {
			continue
		}
		lo, hi := 0.0, 0.0
		if s.HasInterval {
			lo, hi = s.Mean-s.Low, s.High-s.Mean
		}
		pts.XYs = append(pts.XYs, plotter.XY{X: float64(len(names)), Y: s.Mean})
		pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{lo, hi})
		names = append(names, a.name+" − "+a.baseline)
	}
	if len(names) == 0 {
		p.Title.Text += ": no contrasts (no baseline arm)"
		return p.Save(8*vg.Inch, 5*vg.Inch, path)
	}
	sc, err := plotter.NewScatter(pts.XYs)
	if err != nil {
		return err
	}
	eb, err := plotter.NewYErrorBars(pts)
	if err != nil {
		return err
	}
	zero := plotter.NewFunction(func(float64) float64 { return 0 })
	zero.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
	p.Add(zero, sc, eb, plotter.NewGrid())
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = math.Pi / 8
	p.X.Tick.Label.XAlign = -1
	p.Y.Min = math.Min(p.Y.Min, -0.1)
	p.Y.Max = math.Max(p.Y.Max, 0.1)
	return p.Save(9*vg.Inch, 5*vg.Inch, path)
}
