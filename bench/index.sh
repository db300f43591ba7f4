#!/bin/bash
# The cue index side by side with a linear scan of index.jsonl and grep, in
# process and through a mount, at 100k and 1M generated rows.
# Usage: bench/index.sh [ROWS,ROWS...]   (from the repository root, as root for
# the mount; the stores are generated on /dev/shm and removed afterwards)
# Prints the figures recorded in bench/index.md.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-100000,1000000}
TMP=$(mktemp -d /dev/shm/mfm-indexbench.XXXXXX)
trap 'for m in "$TMP"/*.mnt; do mountpoint -q "$m" 2>/dev/null && umount -l "$m"; done; rm -rf "$TMP"' EXIT
go build -o "$TMP/mfmd" ./cmd/mfmd
go run ./bench/indexbench -rows "$ROWS" -dir "$TMP" -mfmd "$TMP/mfmd" -n 200 -scan-n 5
