package play

import "path/filepath"

// Progress is where the run stands, as data: what a client that is not a
// shell (mfmd mcp) returns beside the turn block's text.
type Progress struct {
	Task        string `json:"task"`
	Instruction string `json:"instruction"`
	Step        int64  `json:"step"`
	Budget      int    `json:"budget"`
	StepsUsed   int    `json:"steps_used"`
	StepsLeft   int    `json:"steps_left"`
	PlanCap     int    `json:"plan_cap"`
	// Milestones are the task's milestones in order as the turn block
	// discloses them: of an ordered task, the reached ones and the next;
	// Undisclosed counts the rest.
	Milestones  []MilestoneRecord `json:"milestones"`
	Undisclosed int               `json:"undisclosed,omitempty"`
	// Frame is the latest frame as the turn block shows it (under the
	// mount when there is one); FrameFile is the same file in the store.
	Frame       string `json:"frame,omitempty"`
	FrameFile   string `json:"frame_file,omitempty"`
	Termination string `json:"termination"`
	Turns       int    `json:"turns"`
}

// Progress returns where the run stands.
func (s *Session) Progress() Progress {
	s.mu.Lock()
	defer s.mu.Unlock()
	used := s.usedLocked()
	left := s.run.Budget - used
	if left < 0 {
		left = 0
	}
	p := Progress{
		Task:        s.run.Task.Name,
		Instruction: s.run.Task.Instruction,
		Step:        s.opt.World.State().Step,
		Budget:      s.run.Budget,
		StepsUsed:   used,
		StepsLeft:   left,
		PlanCap:     s.run.PlanCap,
		Milestones:  []MilestoneRecord{},
		Frame:       s.lastFrame,
		FrameFile:   s.lastFrameFile,
		Termination: s.run.Termination,
		Turns:       len(s.run.Turns),
	}
	pending := 0
	for _, m := range s.run.Milestones {
		if !m.Reached {
			if pending++; pending > 1 && s.opt.Task.Ordered {
				p.Undisclosed++
				continue
			}
		}
		p.Milestones = append(p.Milestones, m)
	}
	if p.FrameFile != "" && !filepath.IsAbs(p.FrameFile) {
		p.FrameFile, _ = filepath.Abs(p.FrameFile)
	}
	return p
}
