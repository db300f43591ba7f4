package consolidate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/harness"
)

// SkillProcMark is the directive every procedure generated from a skill
// of K carries; a file in mine/procedures without it is the agent's and
// is never overwritten.
const SkillProcMark = "# mfm-consolidate: generated from mine/knowledge/knowledge.json; a file without this line is never overwritten"

// SkillProcName is the procedure name of a skill: skill_NAME.
func SkillProcName(c Candidate) string { return "skill_" + sanitize(c.Name) }

// skillProcedureNames maps the skill ids of the enabled generated
// procedures in mine/procedures to their names.
func skillProcedureNames(s *episodes.Store) map[string]string {
	out := map[string]string{}
	procs, _, _ := harness.ListProcedures(s.Path(episodes.MineDir, "procedures"), harness.KindProcedure)
	for _, p := range procs {
		if id := p.Directives["skill"]; id != "" && !p.IsDisabled() && p.Directives["consolidate"] != "" {
			out[strings.Fields(id)[0]] = p.Name
		}
	}
	return out
}

// WriteSkillProcedures makes every active skill of K a runnable
// procedure, mine/procedures/skill_NAME.sh: it replays the calls of the
// skill's first supporting run with their recorded arguments (from each
// episode's action.json), preceded by the go_to that led to the run when
// the episode just before it is a go_to that succeeded (the place the
// skill worked); its header carries the provenance (K entry id, evidence
// episodes, trigger, confidence) and the verification rule. A skill that
// left K (superseded, retired) gets mfm-disabled with the reason. Files
// without SkillProcMark are left alone; unchanged files are not
// rewritten. It returns the files written.
func WriteSkillProcedures(s *episodes.Store, k *K, fb []Feedback) ([]string, error) {
	dir := s.Path(episodes.MineDir, "procedures")
	lives, err := s.Lives()
	if err != nil {
		return nil, err
	}
	roots := map[int]string{}
	for _, l := range lives {
		roots[l.N] = l.Root
	}
	byEp := map[string]Feedback{}
	for _, f := range fb {
		byEp[EpisodeKey(f.Life, f.Episode)] = f
	}
	claimed := map[string]string{} // name → skill id
	var written []string
	write := func(name string, body []byte) error {
		p := filepath.Join(dir, name+".sh")
		old, err := os.ReadFile(p)
		switch {
		case err == nil && !bytes.Contains(old, []byte(SkillProcMark)):
			return nil // the agent's own file
		case err == nil && bytes.Equal(old, body):
			return nil
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("skill procedure: %w", err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("skill procedure: %w", err)
		}
		if err := episodes.WriteFileAtomic(p, body, 0o755); err != nil {
			return fmt.Errorf("skill procedure %s: %w", name, err)
		}
		written = append(written, "mine/procedures/"+name+".sh")
		return nil
	}
	for _, state := range []string{KActive, KSuperseded, KRetired} {
		for _, e := range k.Entries {
			if e.Kind != KindSkill || e.State != state {
				continue
			}
			name := SkillProcName(e.Candidate)
			if id, ok := claimed[name]; ok && id != e.ID {
				if state != KActive {
					continue // a name an active skill holds
				}
				name += "_" + e.ID[strings.LastIndexByte(e.ID, '-')+1:]
			}
			claimed[name] = e.ID
			if state != KActive {
				if _, err := os.Stat(filepath.Join(dir, name+".sh")); err != nil {
					continue // never written: nothing to disable
				}
			}
			items := skillItems(e.Candidate, roots, byEp)
			if len(items) == 0 {
				continue
			}
			cited := *e
			cited.Support = inLife(e.Support, lives[len(lives)-1].N)
			if err := write(name, skillScript(name, &cited, items)); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

// skillItems are the procedure items of a skill: the recorded calls of
// its first supporting run (consecutive episodes from its first support
// ref), after the go_to that led there.
func skillItems(c Candidate, roots map[int]string, byEp map[string]Feedback) []map[string]any {
	if len(c.Support) == 0 {
		return nil
	}
	first := c.Support[0]
	in := map[string]bool{}
	for _, r := range c.Support {
		if r.Life == first.Life {
			in[r.ID] = true
		}
	}
	n, ok := epNum(first.ID)
	if !ok {
		return nil
	}
	var items []map[string]any
	if prev := epID(n - 1); !in[prev] {
		if f, ok := byEp[EpisodeKey(first.Life, prev)]; ok && f.Call == "go_to" && f.Success {
			if it := recordedItem(roots[first.Life], prev); it != nil {
				items = append(items, it)
			}
		}
	}
	for i := n; in[epID(i)]; i++ {
		it := recordedItem(roots[first.Life], epID(i))
		if it == nil {
			return nil
		}
		items = append(items, it)
	}
	return items
}

func epNum(id string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "ep_"))
	return n, err == nil && strings.HasPrefix(id, "ep_")
}

func epID(n int) string { return fmt.Sprintf("ep_%06d", n) }

// recordedItem is an episode's call as a procedure item, from its
// action.json (nil when unreadable).
func recordedItem(root, id string) map[string]any {
	if root == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(root, episodes.EpisodesDir, id, "action.json"))
	if err != nil {
		return nil
	}
	var a struct {
		Entry struct {
			Procedure string         `json:"procedure"`
			Args      map[string]any `json:"args"`
			Action    map[string]any `json:"action"`
			Repeat    int            `json:"repeat"`
		} `json:"entry"`
	}
	if json.Unmarshal(b, &a) != nil {
		return nil
	}
	switch {
	case a.Entry.Procedure != "":
		args := a.Entry.Args
		if args == nil {
			args = map[string]any{}
		}
		return map[string]any{"procedure": a.Entry.Procedure, "args": args}
	case len(a.Entry.Action) > 0:
		return map[string]any{"action": a.Entry.Action, "repeat": max(a.Entry.Repeat, 1)}
	}
	return nil
}

// skillScript is the procedure's text.
func skillScript(name string, e *KEntry, items []map[string]any) []byte {
	var refs []string
	for _, r := range e.Support {
		refs = append(refs, RefString(r))
	}
	var trig []string
	for _, k := range sortedTrig(e.Trigger) {
		trig = append(trig, k+"="+e.Trigger[k])
	}
	out, _ := json.Marshal(map[string]any{
		"actions": items,
		"note":    fmt.Sprintf("skill %s [%s]: check %s after it", e.Name, e.ID, e.Verify),
	})
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	fmt.Fprintf(&b, "# %s: skill %s of the knowledge store: %s; verify %s\n", name, e.Name, strings.Join(e.Steps, " → "), e.Verify)
	b.WriteString(SkillProcMark + "\n")
	fmt.Fprintf(&b, "# mfm-skill: %s (confidence %.3f, %d episode(s), state %s)\n", e.ID, e.Confidence, len(e.Support), e.State)
	fmt.Fprintf(&b, "# mfm-evidence: %s\n", strings.Join(refs, " "))
	fmt.Fprintf(&b, "# mfm-verify: %s\n", e.Verify)
	fmt.Fprintf(&b, "# mfm-trigger: %s\n", strings.Join(trig, ", "))
	if e.State != KActive {
		fmt.Fprintf(&b, "# mfm-disabled: %s in the knowledge store: %s\n", e.State, oneLine(e.StateReason))
	}
	b.WriteString("# It replays the calls of the skill's first supporting run with their recorded arguments.\n")
	fmt.Fprintf(&b, "cat <<'MFM_SKILL'\n%s\nMFM_SKILL\n", out)
	return []byte(b.String())
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
