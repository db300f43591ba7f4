package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mfm-project/mfm/play"
)

// PlaySource is the source the act tool's turns carry in run.json.
const PlaySource = "mcp"

// ActInput is the act tool's arguments.
type ActInput struct {
	Plan  string `json:"plan" jsonschema:"the plan: one line of entries separated by ';' (NAME key=value ..., or a raw action {\"forward\":1,\"jump\":1} x20), e.g. go_to x=-70 z=189; mine_ahead; collect_drops item=tree — or the JSON plan {\"actions\": [{\"procedure\": NAME, \"args\": {...}}, {\"action\": {...}, \"repeat\": N}]}"`
	Frame bool   `json:"frame,omitempty" jsonschema:"also return the latest frame (what you see after the turn) as image content"`
}

// PlayEntry is one plan entry's result.
type PlayEntry struct {
	Entry    string   `json:"entry" jsonschema:"the entry as run, e.g. go_to(x=5,z=0)"`
	Outcome  string   `json:"outcome" jsonschema:"ok, failed, refused, dropped or error"`
	Note     string   `json:"note,omitempty" jsonschema:"why it ended so"`
	Steps    int      `json:"steps" jsonschema:"game steps it took"`
	Episodes []string `json:"episodes,omitempty" jsonschema:"episodes it recorded"`
}

// Goal is one milestone of the task.
type Goal struct {
	Name    string `json:"name"`
	When    string `json:"when" jsonschema:"the condition that reaches it"`
	Reached bool   `json:"reached"`
	Step    int64  `json:"step,omitempty" jsonschema:"the game step it was reached at"`
	Turn    string `json:"turn,omitempty" jsonschema:"the turn that reached it (empty: reached at the start)"`
}

// PlayStatus is where a play session's run stands.
type PlayStatus struct {
	Task        string `json:"task"`
	Instruction string `json:"instruction"`
	State       string `json:"state" jsonschema:"running, done (every milestone reached), budget (the step budget is spent), interrupted, world-error, or another end the session gives"`
	Step        int64  `json:"step" jsonschema:"the game's step counter"`
	Budget      int    `json:"budget" jsonschema:"steps the run may use"`
	StepsUsed   int    `json:"steps_used"`
	StepsLeft   int    `json:"steps_left"`
	PlanCap     int    `json:"plan_cap" jsonschema:"most steps one plan may plan for"`
	Turns       int    `json:"turns" jsonschema:"turns taken so far"`
	Goals       []Goal `json:"goals" jsonschema:"the task's milestones in order, reached or not; of an ordered task only the reached ones and the next"`
	Undisclosed int    `json:"undisclosed,omitempty" jsonschema:"further goals of an ordered task, disclosed once the next one is reached"`
	// Frame is the latest frame as a memory path when the session
	// records into this memory, else as the session shows it.
	Frame  string `json:"frame,omitempty" jsonschema:"the latest frame: a memory path for read and view when the session records into this memory, else a file path"`
	Socket string `json:"socket" jsonschema:"the session's control socket"`
}

// ActOutput is the act tool's result.
type ActOutput struct {
	Turn              string      `json:"turn" jsonschema:"the turn's id, e.g. t0003"`
	Entries           []PlayEntry `json:"entries"`
	StepsPlanned      int         `json:"steps_planned"`
	Steps             int         `json:"steps" jsonschema:"game steps the turn took"`
	MilestonesReached []string    `json:"milestones_reached" jsonschema:"milestones this turn reached"`
	Episodes          []string    `json:"episodes" jsonschema:"episodes this turn recorded, in order"`
	Status            PlayStatus  `json:"status" jsonschema:"where the run stands after the turn"`
}

// TaskInput is the task tool's arguments.
type TaskInput struct {
	NoAtoms bool `json:"no_atoms,omitempty" jsonschema:"leave the atom list out: only where the run stands"`
}

// TaskOutput is the task tool's result.
type TaskOutput struct {
	Status PlayStatus `json:"status"`
	Atoms  string     `json:"atoms,omitempty" jsonschema:"the atoms with their parameters, the raw keys and your procedures (the text of mfmd act --list)"`
}

func (s *server) act(ctx context.Context, _ *mcp.CallToolRequest, in ActInput) (*mcp.CallToolResult, ActOutput, error) {
	out := ActOutput{Entries: []PlayEntry{}, MilestonesReached: []string{}, Episodes: []string{}}
	if strings.TrimSpace(in.Plan) == "" {
		return nil, out, errors.New("act: no plan: give plan, e.g. \"go_to x=1 z=2; mine_ahead\" (call task for the atoms)")
	}
	rep, sock, err := s.playCall(ctx, play.Request{Op: "act", Plan: in.Plan, Source: PlaySource}, s.lim.ActTimeout)
	if err != nil {
		return nil, out, fmt.Errorf("act: %w", err)
	}
	if !rep.OK && rep.Refused {
		return nil, out, fmt.Errorf("act: plan refused, nothing done or recorded: %s", rep.Error)
	}
	if !rep.OK && rep.Turn == nil {
		return nil, out, fmt.Errorf("act: the session at %s: %s", sock, rep.Error)
	}
	if t := rep.Turn; t != nil {
		out.Turn, out.StepsPlanned, out.Steps = t.ID, t.StepsPlanned, t.Steps
		for _, e := range t.Entries {
			out.Entries = append(out.Entries, PlayEntry{Entry: e.Entry, Outcome: e.Outcome, Note: e.Note, Steps: e.Steps, Episodes: e.Episodes})
			out.Episodes = append(out.Episodes, e.Episodes...)
		}
		out.MilestonesReached = append(out.MilestonesReached, t.Milestones...)
	}
	var frameFile string
	out.Status, frameFile = s.playStatus(rep.Progress, sock)
	text := rep.Text
	if !rep.OK {
		// the turn ran and the world failed in it: the block says what
		// was done before
		text += "[ERROR] " + rep.Error + "\n"
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{textContent(text)}, IsError: !rep.OK}
	if in.Frame {
		img, note := s.frameImage(frameFile)
		if img != nil {
			res.Content = append(res.Content, img)
		} else {
			res.Content = append(res.Content, textContent("[NOTE] no frame attached: "+note+"\n"))
		}
	}
	return res, out, nil
}

func (s *server) task(ctx context.Context, _ *mcp.CallToolRequest, in TaskInput) (*mcp.CallToolResult, TaskOutput, error) {
	var out TaskOutput
	rep, sock, err := s.playCall(ctx, play.Request{Op: "status"}, s.lim.CallTimeout)
	if err != nil {
		return nil, out, fmt.Errorf("task: %w", err)
	}
	if !rep.OK {
		return nil, out, fmt.Errorf("task: the session at %s: %s", sock, rep.Error)
	}
	out.Status, _ = s.playStatus(rep.Progress, sock)
	if in.NoAtoms {
		return &mcp.CallToolResult{Content: []mcp.Content{textContent(rep.Text)}}, out, nil
	}
	list, err := s.callSocket(ctx, sock, play.Request{Op: "list"}, s.lim.CallTimeout)
	if err != nil {
		return nil, out, fmt.Errorf("task: %w", err)
	}
	if !list.OK {
		return nil, out, fmt.Errorf("task: the session at %s: %s", sock, list.Error)
	}
	out.Atoms = list.Text
	return &mcp.CallToolResult{Content: []mcp.Content{textContent(rep.Text + "\n" + list.Text)}}, out, nil
}

// playStatus is p for the model, and the latest frame's file.
func (s *server) playStatus(p *play.Progress, sock string) (PlayStatus, string) {
	st := PlayStatus{Socket: sock, Goals: []Goal{}}
	if p == nil {
		return st, ""
	}
	st.Task, st.Instruction, st.State = p.Task, p.Instruction, p.Termination
	st.Step, st.Budget, st.StepsUsed, st.StepsLeft, st.PlanCap, st.Turns = p.Step, p.Budget, p.StepsUsed, p.StepsLeft, p.PlanCap, p.Turns
	for _, m := range p.Milestones {
		st.Goals = append(st.Goals, Goal{Name: m.Name, When: m.When, Reached: m.Reached, Step: m.Step, Turn: m.Turn})
	}
	st.Undisclosed = p.Undisclosed
	st.Frame = p.Frame
	if p.FrameFile != "" {
		if rel, err := filepath.Rel(s.cfg.Store.Root, p.FrameFile); err == nil && filepath.IsLocal(rel) {
			st.Frame = filepath.ToSlash(rel)
		}
	}
	return st, p.FrameFile
}

// frameImage is the frame file as image content, or why not.
func (s *server) frameImage(file string) (*mcp.ImageContent, string) {
	if file == "" {
		return nil, "the run has recorded no frame yet"
	}
	mime := map[string]string{".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}[strings.ToLower(filepath.Ext(file))]
	if mime == "" {
		return nil, fmt.Sprintf("%s is not a PNG or JPEG", file)
	}
	fi, err := os.Stat(file)
	if err != nil {
		return nil, err.Error()
	}
	if fi.Size() > int64(s.lim.MaxImageBytes) {
		return nil, imageTooLarge(file, fi.Size(), s.lim.MaxImageBytes).Error()
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err.Error()
	}
	return &mcp.ImageContent{Data: b, MIMEType: mime}, ""
}

// playCall sends q to the first of the configured sockets a session
// answers on, and returns the reply and that socket.
func (s *server) playCall(ctx context.Context, q play.Request, timeout time.Duration) (play.Reply, string, error) {
	for _, sock := range s.cfg.PlaySockets {
		rep, err := s.callSocket(ctx, sock, q, timeout)
		if errors.Is(err, play.ErrNoSession) {
			continue
		}
		return rep, sock, err
	}
	return play.Reply{}, "", fmt.Errorf("%w (looked for its control socket at %s): start one with mfmd play --task TASK (--world sim for the simulated world), then call again; this server finds it at the store's .mfm/%s, $MFM_PLAY_SOCKET or mfmd mcp --play-socket PATH",
		play.ErrNoSession, orNone(s.cfg.PlaySockets), play.SocketName)
}

// callSocket is play.Call that returns when ctx ends. A plan the session
// received before then still runs to its end there.
func (s *server) callSocket(ctx context.Context, sock string, q play.Request, timeout time.Duration) (play.Reply, error) {
	type result struct {
		rep play.Reply
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := play.Call(sock, q, timeout)
		done <- result{rep, err}
	}()
	select {
	case r := <-done:
		return r.rep, r.err
	case <-ctx.Done():
		return play.Reply{}, fmt.Errorf("no reply from the session at %s: %w (a plan it received still runs to its end; task shows where the run stands)", sock, ctx.Err())
	}
}

func orNone(socks []string) string {
	if len(socks) == 0 {
		return "no socket: none is configured"
	}
	return strings.Join(socks, ", ")
}
