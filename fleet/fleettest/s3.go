package fleettest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// VersitygwModule is the S3 server the tests and CI run, built from its Go
// module with go install (posix backend: buckets are directories).
const VersitygwModule = "github.com/versity/versitygw/cmd/versitygw@v1.8.0"

// S3 credentials of the servers started here (loopback only).
const (
	S3Access = "mfmtest"
	S3Secret = "mfmtest-secret-key"
)

// S3Server is a versitygw process serving a temporary directory on
// 127.0.0.1:Port. Stop kills it (SIGKILL); Start brings it back on the same
// port and directory.
type S3Server struct {
	Dir  string
	Port int
	bin  string
	log  string // the server's output, removed by Close
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

var buildOnce struct {
	sync.Once
	path string
	err  error
}

// Versitygw returns the path of the versitygw binary: $MFM_VERSITYGW, else
// versitygw in $GOPATH/bin or PATH, else it builds it once with go install
// (about a minute; CI builds it beforehand and keeps it under GOPATH).
func Versitygw() (string, error) {
	buildOnce.Do(func() {
		if p := os.Getenv("MFM_VERSITYGW"); p != "" {
			buildOnce.path = p
			return
		}
		gobin := goBin()
		if p := filepath.Join(gobin, "versitygw"); isExec(p) {
			buildOnce.path = p
			return
		}
		if p, err := exec.LookPath("versitygw"); err == nil {
			buildOnce.path = p
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "install", VersitygwModule)
		cmd.Env = append(os.Environ(), "GOBIN="+gobin, "GOFLAGS=-mod=mod")
		cmd.Dir = os.TempDir()
		if out, err := cmd.CombinedOutput(); err != nil {
			buildOnce.err = fmt.Errorf("build the S3 server (go install %s): %w\n%s", VersitygwModule, err, tail(out, 2000))
			return
		}
		buildOnce.path = filepath.Join(gobin, "versitygw")
	})
	return buildOnce.path, buildOnce.err
}

func goBin() string {
	if b := os.Getenv("GOBIN"); b != "" {
		return b
	}
	out, err := exec.Command("go", "env", "GOPATH").Output()
	gopath := strings.TrimSpace(string(out))
	if err != nil || gopath == "" {
		home, _ := os.UserHomeDir()
		gopath = filepath.Join(home, "go")
	}
	return filepath.Join(strings.Split(gopath, string(os.PathListSeparator))[0], "bin")
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// StartS3 starts versitygw on a new temporary directory and a free port.
func StartS3() (*S3Server, error) {
	bin, err := Versitygw()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "mfm-s3-")
	if err != nil {
		return nil, fmt.Errorf("start s3 server: %w", err)
	}
	port, err := FreePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &S3Server{Dir: dir, Port: port, bin: bin}
	if err := s.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// Endpoint is the server's URL.
func (s *S3Server) Endpoint() string { return "http://127.0.0.1:" + strconv.Itoa(s.Port) }

// Start starts the server process and waits until it answers HTTP.
func (s *S3Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("s3 server: already running")
	}
	s.log = s.Dir + ".log"
	logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("s3 server log: %w", err)
	}
	cmd := exec.Command(s.bin, "--quiet", "--port", "127.0.0.1:"+strconv.Itoa(s.Port), "posix", s.Dir)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+S3Access, "ROOT_SECRET_KEY="+S3Secret)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(done) }()
	s.cmd, s.done = cmd, done
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			s.cmd = nil
			log, _ := os.ReadFile(logf.Name())
			return fmt.Errorf("s3 server exited at start: %s", tail(log, 2000))
		default:
		}
		resp, err := http.Get(s.Endpoint())
		if err == nil {
			resp.Body.Close()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("s3 server on %s did not answer within 30s", s.Endpoint())
}

// Stop kills the server process (SIGKILL) and waits for it to exit.
func (s *S3Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil
	}
	s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
	return nil
}

// Close stops the server and removes its directory and log.
func (s *S3Server) Close() {
	s.Stop()
	os.RemoveAll(s.Dir)
	os.Remove(s.log)
}
