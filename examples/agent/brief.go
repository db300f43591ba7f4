// Package agent holds the ready brief for an agent whose memory is MFM
// (AGENTS.md), embedded so that servers such as mfmd mcp can hand it out.
package agent

import _ "embed"

// Brief is AGENTS.md: how an agent finds and writes its memory at /mfm.
//
//go:embed AGENTS.md
var Brief string
