#!/bin/bash
# The mount side by side with the native store directory, in one run.
# Usage: bench/mount.sh [REPS]  (from the repository root, as root: it mounts
# a private tmpfs and the FUSE mount; default 5 repetitions).
# Generates on tmpfs a store of 100,000 episodes (20,000 with a 13 KB frame from
# the committed Luanti run) and a 1,000,000-row index.jsonl, then times the same
# shell commands on the store directory and through mounts of it (a fresh mount
# per repetition: its first pass is "cold", the second "warm"). Prints the
# tables recorded in bench/mount.md. Takes 2-4 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "bench/mount.sh: run as root (tmpfs and FUSE mounts)" >&2; exit 1; }
echo "== $(date -u +%Y-%m-%dT%H:%MZ) $(uname -r), $(nproc) CPUs, $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- fs || echo " + uncommitted fs/ changes")"
MFM_FS_BENCH=1 MFM_FS_BENCH_REPS=${1:-5} go test -count=1 -v -timeout 30m -run '^TestMountBenchmark$' ./fs/ |
	grep -v -e '^=== ' -e 'level=INFO' -e '^PASS$' -e '^ok '
