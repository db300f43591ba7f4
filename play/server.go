package play

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// maxLine bounds one request or reply line (a plan, a turn block).
const maxLine = 8 << 20

// SocketName is the control socket's name in the store's .mfm/.
const SocketName = "play.sock"

// Request is one control-socket request (one JSON line).
type Request struct {
	Op     string `json:"op"`               // act, list, status, block
	Plan   string `json:"plan,omitempty"`   // act
	Source string `json:"source,omitempty"` // act: who sent it (act, agent-cmd, …)
}

// Reply is the answer to a Request (one JSON line).
type Reply struct {
	OK bool `json:"ok"`
	// Error says why the request failed; Refused: the plan was refused
	// before anything ran (nothing recorded).
	Error   string      `json:"error,omitempty"`
	Refused bool        `json:"refused,omitempty"`
	Text    string      `json:"text,omitempty"` // the turn block or listing
	Turn    *TurnRecord `json:"turn,omitempty"`
	Ended   string      `json:"ended,omitempty"` // the termination, once the run ended
	// Progress is where the run stands after the request (act, status).
	Progress *Progress `json:"progress,omitempty"`
}

// Server serves a session on a unix socket.
type Server struct {
	sess *Session
	ln   net.Listener
	path string
	wg   sync.WaitGroup
}

// Listen creates the control socket at path (mode 0600; a stale socket
// left by a dead session is replaced, a live one is an error).
func Listen(sess *Session, path string) (*Server, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("play: socket directory: %w", err)
	}
	if _, err := os.Lstat(path); err == nil {
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("play: a session is already serving %s", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("play: remove stale socket: %w", err)
		}
	}
	// connecting needs write permission on the socket: under the usual
	// umask (022) only the owner has it from the start; chmod makes it 0600
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("play: listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("play: chmod socket: %w", err)
	}
	return &Server{sess: sess, ln: ln, path: path}, nil
}

// Path is the socket's path.
func (s *Server) Path() string { return s.path }

// Serve answers requests until ctx ends or Close.
func (s *Server) Serve(ctx context.Context) error {
	go func() { <-ctx.Done(); s.ln.Close() }()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || ctx.Err() != nil {
				s.wg.Wait()
				return nil
			}
			return fmt.Errorf("play: accept: %w", err)
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.handle(ctx, c)
		}()
	}
}

// Close stops listening and removes the socket.
func (s *Server) Close() error {
	err := s.ln.Close()
	_ = os.Remove(s.path)
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

func (s *Server) handle(ctx context.Context, c net.Conn) {
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(io.LimitReader(c, maxLine)).ReadBytes('\n')
	if err != nil && len(line) == 0 {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	rep := s.answer(ctx, line)
	b, _ := json.Marshal(rep)
	_, _ = c.Write(append(b, '\n'))
}

func (s *Server) answer(ctx context.Context, line []byte) Reply {
	var q Request
	if err := json.Unmarshal(line, &q); err != nil {
		return Reply{Error: "not a request: " + err.Error()}
	}
	switch q.Op {
	case "act":
		src := q.Source
		if src == "" {
			src = "act"
		}
		block, turn, err := s.sess.Act(ctx, q.Plan, src)
		rep := Reply{OK: err == nil, Text: block, Turn: turn}
		if err != nil {
			rep.Error = err.Error()
			var pe *PlanError
			rep.Refused = errors.As(err, &pe)
		}
		if t := s.sess.Termination(); t != EndRunning {
			rep.Ended = t
		}
		rep.Progress = ptrTo(s.sess.Progress())
		return rep
	case "list":
		return Reply{OK: true, Text: s.sess.ListAtoms()}
	case "status":
		rep := Reply{OK: true, Text: s.sess.Status(), Progress: ptrTo(s.sess.Progress())}
		if t := s.sess.Termination(); t != EndRunning {
			rep.Ended = t
		}
		return rep
	case "block":
		return Reply{OK: true, Text: s.sess.LastBlock()}
	}
	return Reply{Error: fmt.Sprintf("unknown op %q (want act, list, status or block)", q.Op)}
}

func ptrTo[T any](v T) *T { return &v }

// ErrNoSession is returned by Call when no session serves the socket.
var ErrNoSession = errors.New("no play session is running")

// Call sends one request to the session at path and waits up to timeout
// for the reply.
func Call(path string, q Request, timeout time.Duration) (Reply, error) {
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return Reply{}, fmt.Errorf("%w (socket %s: %v): start one with mfmd play --task TASK", ErrNoSession, path, err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	b, _ := json.Marshal(q)
	if _, err := c.Write(append(b, '\n')); err != nil {
		return Reply{}, fmt.Errorf("play: send to %s: %w", path, err)
	}
	line, err := bufio.NewReader(io.LimitReader(c, maxLine)).ReadBytes('\n')
	if err != nil {
		return Reply{}, fmt.Errorf("play: no reply from %s within %s: %w", path, timeout, err)
	}
	var rep Reply
	if err := json.Unmarshal(line, &rep); err != nil {
		return Reply{}, fmt.Errorf("play: bad reply from %s: %w", path, err)
	}
	return rep, nil
}
