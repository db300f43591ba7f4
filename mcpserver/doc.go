// Package mcpserver serves an MFM memory over the Model Context Protocol
// (github.com/modelcontextprotocol/go-sdk), with the semantics of the
// mount: the record is read-only, mine/ is the only writable place,
// queries and views are the same hooks the mount serves (fs.Hooks).
//
// Tools: query (cue language and the episodes.py flags), read (any memory
// path, text paged by lines, images as image content), view (virtual
// images and maps), write and edit (mine/ only, atomic), check (the
// citations of mine/). Resources: the generated README and the agent
// brief; a prompt that is the brief. Every call is bounded (a timeout and
// size caps) and recovered: a bad call is a tool error, never a crash.
//
// It owns the protocol surface only; cmd/mfmd wires the services in
// (mfmd mcp) and chooses the transport (stdio or streamable HTTP).
package mcpserver
