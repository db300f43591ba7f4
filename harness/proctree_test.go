package harness

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// strayScript leaves a helper behind in a session of its own (out of the
// procedure's process group, its stdio closed), waits until it runs, and
// prints its plan.
const strayScript = `#!/bin/sh
# stray: leaves a helper in its own session
setsid sh -c 'echo > "$MARK"; exec sleep 987654.$TAG' </dev/null >/dev/null 2>&1 &
while [ ! -e "$MARK" ]; do sleep 0.01; done
echo '{"actions": [{"atom": "wait", "args": {"ticks": 1}}]}'
`

// pipeScript backgrounds a helper that keeps the procedure's stdin, stdout
// and stderr open, and exits 0 with a valid plan without reading its
// state.
const pipeScript = `#!/bin/sh
# holds_pipe: a helper that outlives the script keeps its pipes
sh -c 'echo > "$MARK"; exec sleep 987654.$TAG' &
while [ ! -e "$MARK" ]; do sleep 0.01; done
echo '{"actions": [{"atom": "wait", "args": {"ticks": 2}}], "note": "kept"}'
`

// procsWith returns the live processes whose command line contains s.
func procsWith(s string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(cmd, []byte(s)) {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && len(stat) > i+2 && stat[i+2] == 'Z' {
			continue // a zombie is dead
		}
		pids = append(pids, pid)
	}
	return pids
}

// waitNoProcs waits until no live process has s in its command line.
func waitNoProcs(t *testing.T, s string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := procsWith(s)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("processes %v (%s) survived the procedure", pids, s)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestProcedureNoStrayProcesses: whether procedures run in a PID namespace
// (root) or are swept by their run token, a helper that left the process
// group (setsid) does not survive the run, and a helper that holds the
// procedure's pipes neither survives nor turns its exit 0 and valid plan
// into a failure.
func TestProcedureNoStrayProcesses(t *testing.T) {
	for _, mode := range []struct {
		name      string
		namespace bool
	}{{"pid namespace", true}, {"token sweep", false}} {
		t.Run(mode.name, func(t *testing.T) {
			saved := pidNamespaces.Load()
			defer pidNamespaces.Store(saved)
			pidNamespaces.Store(mode.namespace)
			bigState := []byte(`{"pad": "` + strings.Repeat("x", 256<<10) + `"}`)
			for _, tc := range []struct {
				script string
				ticks  string
				state  []byte
			}{{strayScript, "1", []byte("{}")}, {pipeScript, "2", []byte("{}")}, {pipeScript, "2", bigState}} {
				name := strings.Fields(strings.Split(tc.script, "\n")[1])[1]
				name = strings.TrimSuffix(name, ":")
				t.Run(name, func(t *testing.T) {
					tag := strconv.FormatInt(time.Now().UnixNano(), 10)
					dir := procDir(t, map[string]string{name + ".sh": tc.script})
					r := &Runner{Dir: dir, Timeout: testTimeout,
						Env: []string{"MARK=" + filepath.Join(t.TempDir(), "started"), "TAG=" + tag}}
					res, err := r.Run(context.Background(), name, nil, tc.state)
					if mode.namespace && !pidNamespaces.Load() {
						if os.Getenv("CI") != "" {
							t.Fatal("no PID namespace for procedures (CI runs as root, where one must be available)")
						}
						t.Skip("PID namespaces need root")
					}
					if err != nil {
						t.Fatalf("run: %v", err)
					}
					if len(res.Items) != 1 || res.Items[0].Name != "wait" || res.Items[0].Args["ticks"].(interface{ String() string }).String() != tc.ticks {
						t.Errorf("the plan the procedure printed was not kept: %+v", res.Items)
					}
					if len(res.Invocations) != 1 || res.Invocations[0].ExitCode != 0 {
						t.Errorf("invocations %+v", res.Invocations)
					}
					if res.Duration >= drainGrace {
						t.Errorf("the run took %s: it waited for the helper's pipes", res.Duration)
					}
					waitNoProcs(t, "987654."+tag)
				})
			}
		})
	}
}
