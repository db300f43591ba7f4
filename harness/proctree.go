package harness

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// A procedure process and everything it starts must end with the run,
// including children that left its process group (setsid, a double fork).
// Two ways are used:
//
//   - a PID namespace of its own, when the daemon may create one (root):
//     the procedure is its init, and when it exits the kernel kills every
//     process left in the namespace; nothing can leave a PID namespace.
//   - else, every process of the run carries a run token in its
//     environment (procRunEnv); when the run ends the process group is
//     killed and /proc is swept for processes whose environment holds the
//     token, until none is left. A process that clears its environment
//     escapes this sweep: the namespace is the confinement.

// procRunEnv is the environment variable holding a run's token.
const procRunEnv = "MFM_PROCEDURE_RUN"

// pidNamespaces is whether procedures are started in a PID namespace of
// their own; cleared when the kernel refuses one (not root).
var pidNamespaces atomic.Bool

func init() { pidNamespaces.Store(true) }

// newRunToken returns a random token naming one procedure process tree.
func newRunToken() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// procTree is one started procedure process and its descendants.
type procTree struct {
	cmd       *exec.Cmd
	token     string
	namespace bool // started in its own PID namespace
}

// start starts the command build returns in its own process group, in a
// PID namespace of its own when the kernel allows it; the command's Env
// must already hold the token. t.cmd is the command started. t is set
// before Start: a started command's Cancel (kill) may run at once, on
// exec's own goroutine.
func (t *procTree) start(build func() *exec.Cmd) error {
	if pidNamespaces.Load() {
		t.cmd = build()
		t.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Cloneflags: syscall.CLONE_NEWPID}
		t.namespace = true
		err := t.cmd.Start()
		if err == nil {
			return nil
		}
		if !isPermission(err) {
			return err
		}
		pidNamespaces.Store(false)
	}
	t.cmd = build() // a Cmd cannot be started twice
	t.namespace = false
	t.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return t.cmd.Start()
}

// isPermission reports whether starting in a new PID namespace was
// refused by the kernel (not root, or namespaces unavailable).
func isPermission(err error) bool {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return false
	}
	return errno == syscall.EPERM || errno == syscall.EINVAL || errno == syscall.ENOSPC || errno == syscall.EUSERS
}

// kill kills the process group and, outside a namespace, every process
// carrying the run token. It may be called more than once.
func (t *procTree) kill() {
	if t.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
	if t.namespace {
		// killing the namespace's init kills the namespace
		_ = t.cmd.Process.Kill()
		return
	}
	sweepToken(t.token)
}

// sweepToken SIGKILLs every process whose environment holds
// procRunEnv=token, sweeping /proc again until a sweep finds none alive
// (a process forking while it is killed leaves a child with the token).
func sweepToken(token string) {
	needle := []byte(procRunEnv + "=" + token + "\x00")
	self := os.Getpid()
	for round := range 100 {
		if round > 0 {
			time.Sleep(10 * time.Millisecond) // let the killed ones die
		}
		found := false
		ents, err := os.ReadDir("/proc")
		if err != nil {
			return
		}
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == self {
				continue
			}
			env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
			if err != nil || !(bytes.HasPrefix(env, needle) || bytes.Contains(env, append([]byte{0}, needle...))) {
				continue
			}
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				found = true
			}
		}
		if !found {
			return
		}
	}
}
