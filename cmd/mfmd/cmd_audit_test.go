package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestAuditCommand: scores print per condition, a store missing episode
// folders is refused with the reason and exit 1, and the retarget report
// pools several stores.
func TestAuditCommand(t *testing.T) {
	var out, errb bytes.Buffer
	code := runAudit([]string{"--chain", "../../audit/testdata/paper-run-chain.json",
		"--store", "../../testdata/paper-run/store", "--label", "paper"}, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "paper") || !strings.Contains(out.String(), "0.571") {
		t.Errorf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	code = runAudit([]string{"--chain", "../../audit/testdata/paper-run-chain.json",
		"--store", "../../testdata/paper-run-diamond/store"}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "604 of the 611 episode folders") || out.Len() != 0 {
		t.Errorf("diamond: exit %d, stdout %q, stderr %q; want a refusal and no score", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	code = runAudit([]string{"retarget",
		"--store", "../../examples/runs/llm-memory-return/store", "--access", "../../examples/runs/llm-memory-return/access.jsonl",
		"--store", "../../examples/runs/llm-techtree-steel/store"}, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "pooled (task memory-return+techtree-steel)") || !strings.Contains(out.String(), "Fisher") {
		t.Errorf("retarget: exit %d\n%s%s", code, out.String(), errb.String())
	}
}
