package episodespy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// call is one recorded call of the paper's tool (testdata/paper-run/calls.jsonl).
type call struct {
	Turn           int      `json:"turn"`
	Step           int64    `json:"step"`
	Argv           []string `json:"argv"`
	Piped          string   `json:"piped"`
	ExpectedStdout string   `json:"expected_stdout"`
	ExpectedStderr string   `json:"expected_stderr"`
	ExpectedCode   int      `json:"expected_code"`
	Recorded       string   `json:"recorded_output"`
}

const paperRun = "../../testdata/paper-run"

func loadCalls(t testing.TB) []call {
	t.Helper()
	f, err := os.Open(filepath.Join(paperRun, "calls.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var calls []call
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var c call
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		calls = append(calls, c)
	}
	return calls
}

// copyTree copies a directory tree (regular files only).
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// indexAt writes store/index.jsonl holding the rows of full with last_step <= step.
func indexAt(t testing.TB, store string, full []byte, step int64) {
	t.Helper()
	var b bytes.Buffer
	for _, line := range bytes.SplitAfter(full, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r struct {
			LastStep int64 `json:"last_step"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		if r.LastStep <= step {
			b.Write(line)
		}
	}
	if err := os.WriteFile(filepath.Join(store, "index.jsonl"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReplayPaperCalls replays all 44 calls the paper's agent made, each
// over the index as it stood, and compares stdout and exit status byte for
// byte. Stderr is compared with the reference too; for the one usage error
// the reference port differs from the real argparse, so our stderr is
// checked against what the run actually recorded.
func TestReplayPaperCalls(t *testing.T) {
	calls := loadCalls(t)
	if len(calls) != 44 {
		t.Fatalf("calls.jsonl has %d calls, want 44", len(calls))
	}
	store := t.TempDir()
	copyTree(t, filepath.Join(paperRun, "store"), store)
	full, err := os.ReadFile(filepath.Join(store, "index.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	pass := 0
	for i, c := range calls {
		indexAt(t, store, full, c.Step)
		argv := make([]string, len(c.Argv))
		for j, a := range c.Argv {
			argv[j] = strings.TrimPrefix(a, "/tmp/") // sheets go to out/
		}
		var stdout, stderr bytes.Buffer
		code := Main(context.Background(), argv, Env{Store: store, Cwd: out, Stdout: &stdout, Stderr: &stderr})
		gotErr := strings.ReplaceAll(stderr.String(), "sheet: ", "sheet: /tmp/")
		ok := true
		if code != c.ExpectedCode {
			t.Errorf("call %d (turn %d step %d %q): exit %d, want %d", i, c.Turn, c.Step, c.Argv, code, c.ExpectedCode)
			ok = false
		}
		wantOut := c.ExpectedStdout
		if wantOut != "" {
			wantOut += "\n"
		}
		if stdout.String() != wantOut {
			t.Errorf("call %d (turn %d step %d %q): stdout differs\n got: %.600q\nwant: %.600q", i, c.Turn, c.Step, c.Argv, stdout.String(), wantOut)
			ok = false
		}
		if c.ExpectedCode == 2 {
			if !strings.Contains(c.Recorded, gotErr) {
				t.Errorf("call %d: usage error %q not in the recorded output", i, gotErr)
				ok = false
			}
		} else {
			wantErr := c.ExpectedStderr
			if wantErr != "" {
				wantErr += "\n"
			}
			if gotErr != wantErr {
				t.Errorf("call %d (%q): stderr %q, want %q", i, c.Argv, gotErr, wantErr)
				ok = false
			}
		}
		if ok {
			pass++
		}
	}
	t.Logf("%d/%d recorded calls reproduced byte for byte", pass, len(calls))
}
