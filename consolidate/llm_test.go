package consolidate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeLLM is the scripted stand-in for a language model in testdata.
func fakeLLM(t *testing.T, mode string) (LLM, string) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "fakellm.sh"))
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "prompt")
	return LLM{Cmd: "FAKE_LLM_MODE=" + mode + " FAKE_LLM_LOG=" + log + " sh " + script, Timeout: 20 * time.Second}, log
}

func TestLLMGood(t *testing.T) {
	s := constructed(t)
	l, log := fakeLLM(t, "good")
	res, err := ComputeLLM(context.Background(), s, DefaultConfig(), l)
	if err != nil {
		t.Fatal(err)
	}
	var tower *Candidate
	for i, c := range res.Accepted {
		if c.Name == "tower_up" {
			tower = &res.Accepted[i]
		}
		if c.Name == "get_log" {
			t.Errorf("get_log accepted although the llm curator rejected it")
		}
	}
	if tower == nil {
		t.Fatalf("tower_up not accepted; accepted %v, rejected %v", names(res.Accepted), reasons(res.Rejected))
	}
	if tower.Source != "llm" || tower.ID == "made-up" || !strings.HasPrefix(tower.ID, "skill-tower_up-") || tower.SupportCount != 1 ||
		len(tower.Support) != 1 || tower.Support[0].ID != "ep_000006" {
		t.Errorf("tower_up %+v: want source llm, its own id, support_count 1, support ep_000006", *tower)
	}
	found := false
	for _, c := range res.Rejected {
		if c.Name == "get_log" && c.Reason == "llm curator: logs are counted twice" && c.Status == StatusRejected {
			found = true
		}
	}
	if !found {
		t.Errorf("get_log's llm rejection not kept: %v", reasons(res.Rejected))
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], `"nope"`) {
		t.Errorf("notes %q: want the unknown id nope named", res.Notes)
	}
	ind, err := os.ReadFile(log + ".induce")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{PromptInduce + "KNOWN CALLS: go_to, harvest_tree, pillar_up\n\n{\"life\":1,\"episode\":\"ep_000001\""} {
		if !strings.HasPrefix(string(ind), w) {
			t.Errorf("induce prompt starts %.300q, want %.300q", ind, w)
		}
	}
	if n := strings.Count(string(ind), `"episode":"ep_`); n != 14 {
		t.Errorf("induce prompt has %d feedback lines, want 14", n)
	}
	cur, err := os.ReadFile(log + ".curate")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(cur), PromptCurate+"\n[{") || !strings.Contains(string(cur), `"name":"tower_up"`) || !strings.Contains(string(cur), `"name":"get_log"`) {
		t.Errorf("curate prompt %.400q", cur)
	}
	// A fenced answer is accepted too.
	l, _ = fakeLLM(t, "fenced")
	if _, err := ComputeLLM(context.Background(), s, DefaultConfig(), l); err != nil {
		t.Errorf("fenced answer: %v", err)
	}
}

func TestLLMRejected(t *testing.T) {
	s := constructed(t)
	l, _ := fakeLLM(t, "reject")
	res, err := ComputeLLM(context.Background(), s, DefaultConfig(), l)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"unstick": `not specific: step "try again"`,
		"ghost":   "cites episode ep_000999 of life 1, which was not recorded",
		"beam":    `step "teleport" is not a known atom or procedure`,
	}
	for _, c := range res.Rejected {
		if w, ok := want[c.Name]; ok {
			if !strings.Contains(c.Reason, w) || c.Source != "llm" {
				t.Errorf("%s rejected with %q (source %s), want %q", c.Name, c.Reason, c.Source, w)
			}
			delete(want, c.Name)
		}
	}
	for n := range want {
		t.Errorf("%s not rejected; accepted %v", n, names(res.Accepted))
	}
	// The rejections are written with their reasons.
	if err := Write(s, res); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(s.Path(Dir, "rejected.jsonl"))
	if !strings.Contains(string(b), `"reason":"cites episode ep_000999 of life 1, which was not recorded"`) {
		t.Errorf("rejected.jsonl lacks the reason:\n%s", b)
	}
}

func TestLLMErrors(t *testing.T) {
	s := constructed(t)
	for _, c := range []struct {
		mode, want string
		timeout    time.Duration
	}{
		{"malformed", `induce: llm command "FAKE_LLM_MODE=malformed`, 0},
		{"malformed", `the answer is not a JSON object: "Sure! Here are the candidates: {\"candidates\": ["`, 0},
		{"shape", `induce: llm command`, 0},
		{"shape", `want {"candidates": [...]}: no "candidates" array`, 0},
		{"fail", `failed: exit status 3: model unavailable`, 0},
		{"sleep", `timed out after 1s`, time.Second},
		{"curatebad", `curate: llm command`, 0},
	} {
		l, _ := fakeLLM(t, c.mode)
		if c.timeout > 0 {
			l.Timeout = c.timeout
		}
		t0 := time.Now()
		res, err := ComputeLLM(context.Background(), s, DefaultConfig(), l)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: result %v, error %v; want an error containing %q", c.mode, res != nil, err, c.want)
		}
		if d := time.Since(t0); d > 10*time.Second {
			t.Errorf("%s: took %v", c.mode, d)
		}
	}
}

// The prompts in docs/CONSOLIDATE.md are the ones sent.
func TestPromptsDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "CONSOLIDATE.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]string{"PromptInduce": PromptInduce, "PromptCurate": PromptCurate, "PromptAdapt": PromptAdapt} {
		if !strings.Contains(string(b), "```\n"+p+"```\n") {
			t.Errorf("docs/CONSOLIDATE.md does not quote %s exactly in a code block", name)
		}
	}
}

func names(cs []Candidate) []string {
	var n []string
	for _, c := range cs {
		n = append(n, c.Name)
	}
	return n
}

func reasons(cs []Candidate) []string {
	var n []string
	for _, c := range cs {
		n = append(n, c.Name+": "+c.Reason)
	}
	return n
}
