package content

import _ "embed"

// AgentBrief is the ready brief for an agent whose memory is MFM: how it
// finds and writes its memory at /mfm. examples/agent/AGENTS.md is the same
// text (TestAgentBriefInExamples keeps them equal), embedded here so that
// servers such as mfmd mcp can hand it out.
//
//go:embed AGENTS.md
var AgentBrief string
