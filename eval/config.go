// Package eval runs the papers' controlled experiments with `mfmd play`
// (docs/EVAL.md): MC-EvoBench's transfer conditions (no prior, related,
// unrelated and shuffled sources, each frozen into an artifact after a
// matched step budget, the target played read-only on it) and MFM's
// ablations (switches of the play session and mount), over K paired agent
// seeds in one world seed. A run that finished is recorded atomically and
// never redone, so an experiment resumes after a crash. The report is a
// markdown table per condition and PNG plots.
package eval

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mfm-project/mfm/audit"
	"github.com/mfm-project/mfm/internal/strictjson"
)

// Transfer conditions (MC-EvoBench appendix D).
const (
	NoPrior   = "no-prior"  // empty memory
	Related   = "related"   // the related source sequence
	Unrelated = "unrelated" // the unrelated source sequence
	Shuffled  = "shuffled"  // the related sequence reversed
)

// Conditions are the transfer conditions in report order.
var Conditions = []string{NoPrior, Related, Unrelated, Shuffled}

// Ablations (MFM Table 4) and how each is played: the `mfmd play
// --ablate` switch, or, for no-consolidation, no --consolidate-every.
var Ablations = []string{"no-observations", "flat", "no-procedures", NoConsolidation, Direct}

// The ablations the runner treats apart from `--ablate`.
const (
	// NoConsolidation plays its source and its target without
	// consolidation (`--adapt` only: the turn block's [MEMORY] offers from
	// the knowledge store stay) where every other arm consolidates every
	// Config.ConsolidateEvery turns.
	NoConsolidation = "no-consolidation"
	// Direct has no memory at all: no mount, no consolidation.
	Direct = "direct"
)

// Config is an experiment, read from one JSON file.
type Config struct {
	// Name names the experiment in the report.
	Name string `json:"name"`
	// World is luanti (the game, headless) or sim (play.SimWorld).
	World string `json:"world"`
	// WorldSeed is the one map seed every run plays in (0: the task's).
	WorldSeed int64 `json:"world_seed"`
	// TasksDir is the task catalog, relative to the config file
	// (default: tasks/ beside it).
	TasksDir string `json:"tasks_dir"`
	// Target is the target task sequence, played in order.
	Target []string `json:"target"`
	// Related and Unrelated are the source sequences; the shuffled
	// source is Related reversed.
	Related   []string `json:"related"`
	Unrelated []string `json:"unrelated"`
	// Conditions to run (default: all four).
	Conditions []string `json:"conditions"`
	// Ablations to run on the target under AblationCondition.
	Ablations []string `json:"ablations"`
	// AblationCondition is the condition the ablations change (default
	// related).
	AblationCondition string `json:"ablation_condition"`
	// Seeds are the agent seeds (MFM_AGENT_SEED), one paired replicate
	// each: every condition and ablation runs once per seed.
	Seeds []int64 `json:"seeds"`
	// SourceSteps is every source's matched environment-step budget.
	SourceSteps int `json:"source_steps"`
	// TargetBudget overrides the target tasks' step budgets when > 0.
	TargetBudget int `json:"target_budget"`
	// AgentCmd is the agent command (`mfmd play --agent-cmd`). It runs
	// in the play's work directory and sees MFM_AGENT_SEED (the unit's
	// agent seed) and MFM_EVAL_DIR (the config file's directory).
	AgentCmd string `json:"agent_cmd"`
	// AgentTimeout bounds one turn of the agent (default 10m).
	AgentTimeout string `json:"agent_timeout"`
	// MaxTurns stops a run after this many turns (0: none).
	MaxTurns int `json:"max_turns"`
	// ConsolidateEvery N > 0 has every play (sources and targets)
	// consolidate into mine/knowledge/ every N turns and at its end
	// (`mfmd play --consolidate-every N`), except the no-consolidation
	// arm's and direct's. The no-consolidation ablation needs it.
	ConsolidateEvery int `json:"consolidate_every"`
	// Chain is the target's audit chain (docs/AUDIT.md), relative to the
	// config file: each target run is scored with audit.Score on its
	// store. Empty: the report's TSR is the run.json milestone share and
	// WGP and VMP are not computed.
	Chain string `json:"chain"`

	// dir is the config file's directory.
	dir string
	// chain is Chain loaded, chainSHA the sha256 of its file.
	chain    *audit.Chain
	chainSHA string
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ParseConfig decodes and checks a config; unknown fields are errors.
// dir is the directory relative paths are taken from.
func ParseConfig(data []byte, dir string) (*Config, error) {
	var c Config
	if err := strictjson.Decode(data, &c); err != nil {
		return nil, fmt.Errorf("eval config: %w", err)
	}
	c.dir = dir
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("eval config: %w", err)
	}
	if err := c.loadChain(); err != nil {
		return nil, fmt.Errorf("eval config: %w", err)
	}
	return &c, nil
}

// LoadConfig reads and parses a config file.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("eval config: %w", err)
	}
	abs, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("eval config: %w", err)
	}
	c, err := ParseConfig(b, abs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

func (c *Config) check() error {
	if !nameRE.MatchString(c.Name) {
		return fmt.Errorf("name %q: want letters, digits, . _ -", c.Name)
	}
	if c.World == "" {
		c.World = "luanti"
	}
	if c.World != "luanti" && c.World != "sim" {
		return fmt.Errorf("world %q: want luanti or sim", c.World)
	}
	if c.TasksDir == "" {
		c.TasksDir = "tasks"
	}
	if len(c.Target) == 0 {
		return errors.New("target: at least one task")
	}
	for _, seq := range [][]string{c.Target, c.Related, c.Unrelated} {
		for _, t := range seq {
			if !nameRE.MatchString(strings.TrimSuffix(t, ".json")) {
				return fmt.Errorf("task %q: want a task name from the catalog", t)
			}
		}
	}
	if len(c.Conditions) == 0 {
		c.Conditions = slices.Clone(Conditions)
	}
	seen := map[string]bool{}
	for _, cond := range c.Conditions {
		if !slices.Contains(Conditions, cond) {
			return fmt.Errorf("condition %q: want one of %s", cond, strings.Join(Conditions, ", "))
		}
		if seen[cond] {
			return fmt.Errorf("condition %q given twice", cond)
		}
		seen[cond] = true
	}
	if c.AblationCondition == "" {
		c.AblationCondition = Related
	}
	if !slices.Contains(Conditions, c.AblationCondition) {
		return fmt.Errorf("ablation_condition %q: want one of %s", c.AblationCondition, strings.Join(Conditions, ", "))
	}
	for _, a := range c.Ablations {
		if !slices.Contains(Ablations, a) {
			return fmt.Errorf("ablation %q: want one of %s", a, strings.Join(Ablations, ", "))
		}
		if seen["ablation "+a] {
			return fmt.Errorf("ablation %q given twice", a)
		}
		seen["ablation "+a] = true
	}
	needs := slices.Clone(c.Conditions)
	if len(c.Ablations) > 0 {
		needs = append(needs, c.AblationCondition)
	}
	for _, cond := range needs {
		if (cond == Related || cond == Shuffled) && len(c.Related) == 0 {
			return fmt.Errorf("condition %s needs a related sequence", cond)
		}
		if cond == Unrelated && len(c.Unrelated) == 0 {
			return errors.New("condition unrelated needs an unrelated sequence")
		}
		if cond != NoPrior && c.SourceSteps <= 0 {
			return fmt.Errorf("condition %s needs source_steps > 0", cond)
		}
	}
	if len(c.Seeds) == 0 {
		return errors.New("seeds: at least one agent seed")
	}
	seeds := map[int64]bool{}
	for _, s := range c.Seeds {
		if seeds[s] {
			return fmt.Errorf("seed %d given twice", s)
		}
		seeds[s] = true
	}
	if c.TargetBudget < 0 || c.MaxTurns < 0 || c.SourceSteps < 0 || c.ConsolidateEvery < 0 {
		return errors.New("target_budget, max_turns, source_steps and consolidate_every must not be negative")
	}
	if slices.Contains(c.Ablations, NoConsolidation) && c.ConsolidateEvery == 0 {
		return errors.New("ablation no-consolidation needs consolidate_every > 0: the arm it is compared with must consolidate")
	}
	if strings.TrimSpace(c.AgentCmd) == "" {
		return errors.New("agent_cmd: the agent command is required")
	}
	if c.AgentTimeout == "" {
		c.AgentTimeout = "10m"
	}
	if d, err := time.ParseDuration(c.AgentTimeout); err != nil || d <= 0 {
		return fmt.Errorf("agent_timeout %q: want a positive duration (e.g. 10m)", c.AgentTimeout)
	}
	return nil
}

// Source is the source sequence of a condition (nil for no-prior).
func (c *Config) Source(cond string) []string {
	switch cond {
	case Related:
		return c.Related
	case Unrelated:
		return c.Unrelated
	case Shuffled:
		out := slices.Clone(c.Related)
		slices.Reverse(out)
		return out
	}
	return nil
}

// tasksDir is the catalog's absolute path.
func (c *Config) tasksDir() string {
	if filepath.IsAbs(c.TasksDir) {
		return c.TasksDir
	}
	return filepath.Join(c.dir, c.TasksDir)
}
