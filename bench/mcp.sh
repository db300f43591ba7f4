#!/bin/bash
# Latency of each mfmd mcp tool call beside the same operation through mfmd mount.
# Usage: bench/mcp.sh [N]   (from the repository root, as root: the mount side needs
# /dev/fuse; N calls per operation, default 300). Prints the go test -bench lines,
# then a table: operation, MCP µs/call, mount µs/op, ratio, and each daemon's CPU per
# operation (µs; the mount's is 0 when the kernel answers from its cache). Figures: bench/mcp.md.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-300}
echo "commit $(git rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
out=$(go test -run xxx -bench CallVsMount -benchtime "${N}x" ./mcpserver/ 2>/dev/null | grep ^Benchmark)
echo "$out"
echo
echo "$out" | awk '
{ split($1, p, "/"); op = p[2]; side = p[3]; sub(/-[0-9]+$/, "", side); t[op, side] = $3 / 1000; c[op, side] = $5; if (!(op in seen)) { seen[op] = 1; order[++n] = op } }
END {
	printf "%-26s %10s %10s %8s %14s %14s\n", "operation", "mcp µs", "mount µs", "ratio", "mcp cpu µs", "mount cpu µs"
	for (i = 1; i <= n; i++) { o = order[i]; printf "%-26s %10.0f %10.0f %7.1fx %14.0f %14.0f\n", o, t[o, "mcp"], t[o, "mount"], t[o, "mcp"] / t[o, "mount"], c[o, "mcp"], c[o, "mount"] }
}'
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
