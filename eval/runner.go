package eval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/mfm-project/mfm/artifact"
	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/play"
	"github.com/mfm-project/mfm/task"
)

// ResultName is the file that marks a unit finished, written atomically
// as its last act: a unit without it is redone from scratch.
const ResultName = "result.json"

// Runner runs an experiment's units with `mfmd play`.
type Runner struct {
	Config *Config
	// Out is the experiment's output directory (runs/, report/).
	Out string
	// Mfmd is the mfmd executable that plays.
	Mfmd string
	// MountRoot holds the runs' mount points and sockets (default: a
	// directory under the system's temporary directory named after Out,
	// so a resumed run mounts where the crashed one did and clears its
	// stale mount).
	MountRoot string
	// Progress receives one line per unit started and finished.
	Progress io.Writer
	// Now gives times (default time.Now).
	Now func() time.Time
}

// PlayRun is one `mfmd play` of a unit: its task, its run.json and
// where the copy of run.json is kept.
type PlayRun struct {
	Task    string         `json:"task"`
	Budget  int            `json:"budget"`
	RunJSON string         `json:"run_json"` // relative to the unit's directory
	Run     play.RunRecord `json:"-"`
	Steps   int            `json:"steps"`
	Reached int            `json:"reached"`
	Planned int            `json:"planned"`
	// Termination is run.json's (done, budget, …).
	Termination string `json:"termination"`
}

// Provenance is what a target run was played on.
type Provenance struct {
	ArtifactSHA256 string   `json:"artifact_sha256,omitempty"` // the archive file's
	ManifestSHA256 string   `json:"manifest_sha256,omitempty"` // the manifest's, as the seeded store records it
	SourceTasks    []string `json:"source_tasks,omitempty"`
	SourceSteps    int      `json:"source_steps,omitempty"`
	AgentCmd       string   `json:"agent_cmd"`
	WorldSeed      int64    `json:"world_seed"`
	AgentSeed      int64    `json:"agent_seed"`
	World          string   `json:"world"`
	PlayArgs       []string `json:"play_args"` // of the last play, without the paths
	Termination    string   `json:"termination"`
}

// Result is a finished unit (result.json).
type Result struct {
	Unit Unit `json:"unit"`
	// Status is "ok"; an older mfmd recorded a unit it could not play as
	// "skipped" with Why (redone when the experiment resumes).
	Status   string    `json:"status"`
	Why      string    `json:"why,omitempty"`
	Runs     []PlayRun `json:"runs"`               // the plays, in order
	Steps    int       `json:"steps"`              // steps over all plays
	Artifact string    `json:"artifact,omitempty"` // a source's frozen mine/, relative to Out
	// Provenance of a target run; for a source, its artifact's hash.
	Provenance Provenance `json:"provenance"`
	// Audit is a target run's scores against the config's chain, taken
	// on its store when it finished (nil without a chain).
	Audit   *RunAudit `json:"audit,omitempty"`
	Started string    `json:"started"`
	Seconds float64   `json:"seconds"`
}

// Run runs every unit not finished yet, in plan order, and returns the
// results of all units. A unit that fails stops the experiment with an
// error (the finished ones stay).
func (r *Runner) Run(ctx context.Context) ([]Result, error) {
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.Progress == nil {
		r.Progress = io.Discard
	}
	if r.MountRoot == "" {
		sum := sha256.Sum256([]byte(r.Out))
		r.MountRoot = filepath.Join(os.TempDir(), "mfm-eval-"+hex.EncodeToString(sum[:6]))
	}
	if err := os.MkdirAll(r.MountRoot, 0o755); err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	units := r.Config.Plan()
	results := make([]Result, 0, len(units))
	byID := map[string]Result{}
	started := r.Now()
	ran := 0
	for i, u := range units {
		if res, err := ReadResult(r.Out, u); err == nil && res.Status == "ok" {
			fmt.Fprintf(r.Progress, "[%d/%d] %s: finished before (%s)\n", i+1, len(units), u.ID, res.summary())
			results = append(results, *res)
			byID[u.ID] = *res
			continue
		} else if err != nil && !errors.Is(err, os.ErrNotExist) {
			return results, err
		}
		if ctx.Err() != nil {
			return results, ctx.Err()
		}
		eta := ""
		if ran > 0 {
			per := r.Now().Sub(started) / time.Duration(ran)
			eta = fmt.Sprintf(", about %s left", (per * time.Duration(len(units)-i)).Round(time.Second))
		}
		fmt.Fprintf(r.Progress, "[%d/%d] %s: running%s\n", i+1, len(units), u.ID, eta)
		res, err := r.runUnit(ctx, u, byID)
		if err != nil {
			return results, fmt.Errorf("eval: %s: %w", u.ID, err)
		}
		ran++
		fmt.Fprintf(r.Progress, "[%d/%d] %s: %s\n", i+1, len(units), u.ID, res.summary())
		results = append(results, *res)
		byID[u.ID] = *res
	}
	return results, nil
}

func (res *Result) summary() string {
	if res.Status != "ok" {
		return res.Status + ": " + res.Why
	}
	reached, planned := 0, 0
	for _, p := range res.Runs {
		reached += p.Reached
		planned += p.Planned
	}
	return fmt.Sprintf("%d plays, %d steps, %d of %d milestones, %.1f s", len(res.Runs), res.Steps, reached, planned, res.Seconds)
}

// ReadResult reads a finished unit's result.json (os.ErrNotExist: not
// finished) with its runs' run.json.
func ReadResult(out string, u Unit) (*Result, error) {
	dir := u.dir(out)
	b, err := os.ReadFile(filepath.Join(dir, ResultName))
	if err != nil {
		return nil, err
	}
	var res Result
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("eval: %s: %w", filepath.Join(dir, ResultName), err)
	}
	for i := range res.Runs {
		b, err := os.ReadFile(filepath.Join(dir, res.Runs[i].RunJSON))
		if err != nil {
			return nil, fmt.Errorf("eval: %s: %w", u.ID, err)
		}
		if err := json.Unmarshal(b, &res.Runs[i].Run); err != nil {
			return nil, fmt.Errorf("eval: %s: %s: %w", u.ID, res.Runs[i].RunJSON, err)
		}
	}
	return &res, nil
}

// runUnit runs one unit from scratch and records its result.
func (r *Runner) runUnit(ctx context.Context, u Unit, done map[string]Result) (*Result, error) {
	dir := u.dir(r.Out)
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("clear the unfinished run: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	start := r.Now()
	res := &Result{Unit: u, Status: "ok", Started: start.UTC().Format(time.RFC3339)}
	c := r.Config
	res.Provenance = Provenance{AgentCmd: c.AgentCmd, WorldSeed: c.WorldSeed, AgentSeed: u.Seed, World: c.World}
	storeDir := filepath.Join(dir, "store")
	extra := c.playFlags(u)
	if u.Kind == KindSource {
		if _, err := episodes.Init(storeDir); err != nil {
			return nil, err
		}
		if err := r.playSource(ctx, u, dir, storeDir, extra, res); err != nil {
			return nil, err
		}
	} else {
		if err := r.seedTarget(u, storeDir, done, res); err != nil {
			return nil, err
		}
		extra = append(extra, "--read-only-mine")
		for i, name := range c.Target {
			if _, err := r.play(ctx, u, dir, storeDir, i, name, c.TargetBudget, extra, res); err != nil {
				return nil, err
			}
		}
		res.Audit = c.scoreStore(u.Arm(), storeDir)
	}
	res.Seconds = r.Now().Sub(start).Seconds()
	return res, r.writeResult(dir, res)
}

// playSource plays the source sequence, cycling through it, until the
// matched step budget is spent, then freezes mine/ into an artifact.
func (r *Runner) playSource(ctx context.Context, u Unit, dir, storeDir string, extra []string, res *Result) error {
	seq := r.Config.Source(u.Condition)
	left, idle := r.Config.SourceSteps, 0
	for i := 0; left > 0 && idle < len(seq); i++ {
		name := seq[i%len(seq)]
		tk, _, err := task.Load(name, r.Config.tasksDir())
		if err != nil {
			return err
		}
		pr, err := r.play(ctx, u, dir, storeDir, i, name, min(tk.Budget, left), extra, res)
		if err != nil {
			return err
		}
		left -= pr.Steps
		if pr.Steps == 0 {
			idle++ // a play that used no step: give up after a whole sequence of them
		} else {
			idle = 0
		}
	}
	store, err := episodes.Open(storeDir)
	if err != nil {
		return err
	}
	res.Artifact = filepath.ToSlash(filepath.Join("runs", filepath.FromSlash(u.ID), "mine.tar"))
	archive := filepath.Join(r.Out, filepath.FromSlash(res.Artifact))
	if _, err := artifact.ExportFile(store, archive, artifact.ExportOptions{Include: "mine", Now: r.Now}); err != nil {
		return fmt.Errorf("freeze mine/: %w", err)
	}
	sum, err := fileSHA256(archive)
	if err != nil {
		return err
	}
	res.Provenance.ArtifactSHA256 = sum
	res.Provenance.SourceTasks = seq
	res.Provenance.SourceSteps = res.Steps
	return nil
}

// seedTarget makes the target's store: empty (no-prior) or seeded from
// its source's artifact, and fills the provenance.
func (r *Runner) seedTarget(u Unit, storeDir string, done map[string]Result, res *Result) error {
	if u.Source == "" {
		_, err := episodes.Init(storeDir)
		return err
	}
	src, ok := done[u.Source]
	if !ok || src.Artifact == "" {
		return fmt.Errorf("its source %s has not finished", u.Source)
	}
	archive := filepath.Join(r.Out, filepath.FromSlash(src.Artifact))
	sum, err := fileSHA256(archive)
	if err != nil {
		return err
	}
	if sum != src.Provenance.ArtifactSHA256 {
		return fmt.Errorf("the artifact %s changed since its source froze it (sha256 %s, recorded %s)", archive, sum, src.Provenance.ArtifactSHA256)
	}
	_, prov, err := artifact.Seed(archive, storeDir)
	if err != nil {
		return fmt.Errorf("seed from %s: %w", archive, err)
	}
	res.Provenance.ArtifactSHA256 = sum
	res.Provenance.ManifestSHA256 = prov.ManifestSHA256
	res.Provenance.SourceTasks = src.Provenance.SourceTasks
	res.Provenance.SourceSteps = src.Steps
	return nil
}

// play runs one `mfmd play` of task name into storeDir and appends it to
// res.
func (r *Runner) play(ctx context.Context, u Unit, dir, storeDir string, i int, name string, budget int, extra []string, res *Result) (PlayRun, error) {
	c := r.Config
	tag := fmt.Sprintf("%02d-%s", i, name)
	work := filepath.Join(dir, "work", tag)
	if err := os.MkdirAll(work, 0o755); err != nil {
		return PlayRun{}, err
	}
	key := sha256.Sum256([]byte(u.ID))
	short := hex.EncodeToString(key[:6])
	mnt := filepath.Join(r.MountRoot, short)
	args := []string{"--task", name, "--tasks", c.tasksDir(), "--world", c.World,
		"--agent-cmd", c.AgentCmd, "--agent-timeout", c.AgentTimeout, "--linger", "0"}
	if c.WorldSeed != 0 {
		args = append(args, "--seed", strconv.FormatInt(c.WorldSeed, 10))
	}
	if budget > 0 {
		args = append(args, "--budget", strconv.Itoa(budget))
	}
	if c.MaxTurns > 0 {
		args = append(args, "--max-turns", strconv.Itoa(c.MaxTurns))
	}
	args = append(args, extra...)
	res.Provenance.PlayArgs = args
	full := append([]string{"play"}, args...)
	full = append(full, "--store", storeDir, "--work", work, "--socket", mnt+".sock")
	if u.Ablation != Direct {
		full = append(full, "--mount", mnt)
	}
	logf, err := os.Create(filepath.Join(dir, "play-"+tag+".log"))
	if err != nil {
		return PlayRun{}, err
	}
	defer logf.Close()
	cmd := exec.CommandContext(ctx, r.Mfmd, full...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "MFM_AGENT_SEED="+strconv.FormatInt(u.Seed, 10), "MFM_EVAL_DIR="+c.dir)
	cmd.Stdout, cmd.Stderr = logf, logf
	// stop it as Ctrl-C does, so that it unmounts
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = 30 * time.Second
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return PlayRun{}, ctx.Err()
	}
	runPath := filepath.Join(storeDir, "run.json")
	b, err := os.ReadFile(runPath)
	if err != nil {
		return PlayRun{}, fmt.Errorf("mfmd play %s (%v) left no run.json; see %s: %w", name, runErr, logf.Name(), err)
	}
	var run play.RunRecord
	if err := json.Unmarshal(b, &run); err != nil {
		return PlayRun{}, fmt.Errorf("%s: %w", runPath, err)
	}
	if run.Termination == play.EndRunning || run.Termination == play.EndInterrupted || run.Termination == play.EndWorldError {
		return PlayRun{}, fmt.Errorf("mfmd play %s ended %q (%v); see %s", name, run.Termination, runErr, logf.Name())
	}
	if len(run.Turns) == 0 && run.Termination != play.EndDone {
		return PlayRun{}, fmt.Errorf("mfmd play %s ended %q without a turn: the agent command never acted; see %s", name, run.Termination, logf.Name())
	}
	keep := filepath.Join("runs", tag+".run.json")
	if err := os.MkdirAll(filepath.Join(dir, "runs"), 0o755); err != nil {
		return PlayRun{}, err
	}
	if err := episodes.WriteFileAtomic(filepath.Join(dir, keep), b, 0o644); err != nil {
		return PlayRun{}, err
	}
	pr := PlayRun{Task: name, Budget: run.Budget, RunJSON: keep, Run: run, Steps: run.StepsUsed, Termination: run.Termination}
	pr.Reached, pr.Planned = reachedOf(run)
	res.Runs = append(res.Runs, pr)
	res.Steps += pr.Steps
	res.Provenance.Termination = run.Termination
	return pr, nil
}

// playFlags are a unit's `mfmd play` flags for its memory: consolidation
// every ConsolidateEvery turns, except under no-consolidation (offers
// only, --adapt) and direct; a target's ablation switch.
func (c *Config) playFlags(u Unit) []string {
	var out []string
	switch {
	case u.Ablation == NoConsolidation:
		if c.ConsolidateEvery > 0 {
			out = append(out, "--adapt")
		}
	case u.Ablation == Direct:
	case c.ConsolidateEvery > 0:
		out = append(out, "--consolidate-every", strconv.Itoa(c.ConsolidateEvery))
	}
	if u.Kind == KindTarget && u.Ablation != "" && u.Ablation != NoConsolidation {
		out = append(out, "--ablate", u.Ablation)
	}
	return out
}

func (r *Runner) writeResult(dir string, res *Result) error {
	b, err := json.MarshalIndent(res, "", " ")
	if err != nil {
		return err
	}
	return episodes.WriteFileAtomic(filepath.Join(dir, ResultName), append(b, '\n'), 0o644)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Finished returns the results of the experiment's finished units.
func Finished(c *Config, out string) ([]Result, error) {
	var results []Result
	for _, u := range c.Plan() {
		res, err := ReadResult(out, u)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return results, err
		}
		results = append(results, *res)
	}
	return results, nil
}
