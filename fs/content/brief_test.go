package content

import (
	"os"
	"testing"
)

// TestAgentBriefInExamples: examples/agent/AGENTS.md, the brief users copy,
// is the brief the binary hands out.
func TestAgentBriefInExamples(t *testing.T) {
	b, err := os.ReadFile("../../examples/agent/AGENTS.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != AgentBrief {
		t.Error("examples/agent/AGENTS.md differs from fs/content/AGENTS.md: edit one and copy it to the other")
	}
}
