package play

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/task"
)

// RunFile is the run record's name in the store.
const RunFile = episodes.RunFileName

// RunRecord is run.json: what the run was asked, what it did, how it
// ended. It is rewritten atomically after every turn.
type RunRecord struct {
	Task        TaskRecord        `json:"task"`
	Seed        int64             `json:"world_seed"`
	Budget      int               `json:"budget"`
	PlanCap     int               `json:"plan_cap"`
	StepsUsed   int               `json:"steps_used"`
	StartStep   int64             `json:"start_step"`
	Start       [3]float64        `json:"start_pos"`
	Milestones  []MilestoneRecord `json:"milestones"`
	Turns       []TurnRecord      `json:"turns"`
	Termination string            `json:"termination"`
	Error       string            `json:"error,omitempty"`
	Started     string            `json:"started"`
	Ended       string            `json:"ended,omitempty"`
	WallSeconds float64           `json:"wall_seconds"`
	Store       string            `json:"store"`
	Mount       string            `json:"mount,omitempty"`
	// ReadsAfter are the memory reads no turn followed: during the last
	// turn and after it (the notes written after the end).
	ReadsAfter []MemoryRead `json:"reads_after,omitempty"`
	// Consolidations are the consolidation passes run during the run (adaptor.go).
	Consolidations []ConsolidationRecord `json:"consolidations,omitempty"`
}

// TaskRecord is the task as run.json keeps it.
type TaskRecord struct {
	Name        string         `json:"name"`
	File        string         `json:"file,omitempty"`
	Instruction string         `json:"instruction"`
	StartKit    map[string]int `json:"start_kit,omitempty"`
	Ordered     bool           `json:"ordered,omitempty"`
}

func taskRecord(t *task.Task, file string) TaskRecord {
	return TaskRecord{Name: t.Name, File: file, Instruction: t.Instruction, StartKit: t.StartKit, Ordered: t.Ordered}
}

// MilestoneRecord is one milestone and when it was reached.
type MilestoneRecord struct {
	Name    string `json:"name"`
	When    string `json:"when"`
	Index   int    `json:"index"`
	Reached bool   `json:"reached"`
	// Step is the harness step it was first reached at; StepsFromStart
	// the steps of the run up to it; Turn the turn ("" at the start).
	Step           int64  `json:"step,omitempty"`
	StepsFromStart int64  `json:"steps_from_start,omitempty"`
	Turn           string `json:"turn,omitempty"`
}

// TurnRecord is one turn: one plan, as one `mfmd act` call (or one
// agent command run) sent it.
type TurnRecord struct {
	ID           string        `json:"id"`
	Source       string        `json:"source"` // act, agent-cmd, actions.json, scripted
	Plan         string        `json:"plan"`
	Started      string        `json:"started"`
	Millis       int64         `json:"ms"`
	StepsPlanned int           `json:"steps_planned"`
	StepBefore   int64         `json:"step_before"`
	StepAfter    int64         `json:"step_after"`
	Steps        int           `json:"steps"`
	Entries      []EntryRecord `json:"entries"`
	Milestones   []string      `json:"milestones,omitempty"`
	// ReadsBefore are the memory reads (the mount's access log) that
	// came before this turn's plan, since the previous turn began.
	ReadsBefore []MemoryRead `json:"reads_before,omitempty"`
	// Memory is what the block offered after a failed call (adaptor.go).
	Memory *MemoryOffer `json:"memory,omitempty"`
}

// EntryRecord is one plan entry's result.
type EntryRecord struct {
	Entry    string   `json:"entry"`
	Outcome  string   `json:"outcome"` // ok, failed, refused, dropped, error
	OK       bool     `json:"ok"`
	Note     string   `json:"note,omitempty"`
	Steps    int      `json:"steps"`
	Episodes []string `json:"episodes,omitempty"`
	Events   []string `json:"events,omitempty"`
}

// Path is run.json's path in the store.
func RunPath(s *episodes.Store) string { return s.Path(RunFile) }

// ReadRun reads a store's run.json.
func ReadRun(s *episodes.Store) (RunRecord, error) {
	var r RunRecord
	b, err := os.ReadFile(RunPath(s))
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", RunPath(s), err)
	}
	return r, nil
}

// Flush brings run.json up to date with the memory reads logged since
// the last turn (call it after the mount's access log is flushed, e.g.
// after unmounting).
func (s *Session) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writeRun()
}

func (s *Session) writeRun() error {
	if s.reads != nil {
		if err := s.reads.follow(); err != nil {
			s.opt.Logger.Warn("play: read the access log", "err", err)
		}
		s.run.ReadsAfter = s.reads.attribute(&s.run)
	}
	b, err := json.MarshalIndent(s.run, "", " ")
	if err != nil {
		return fmt.Errorf("play: run.json: %w", err)
	}
	if err := episodes.WriteFileAtomic(RunPath(s.opt.Store), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("play: write run.json: %w", err)
	}
	return nil
}
