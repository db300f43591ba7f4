#!/bin/bash
# The daemon's memory under many distinct views and queries: the resident set
# (VmRSS) of an `mfmd mount` process before and after reading VIEWS distinct
# zoom views and QUERIES distinct queries of the committed Luanti run, then
# after IDLE seconds of no requests.
# Usage: bench/memory.sh [MFMD]  (from the repository root, as root; MFMD is
# the binary to measure, default one built from this tree). Environment:
# VIEWS (1000), QUERIES (3000), IDLE (60). Prints the lines recorded in
# bench/memory.md. Takes 1-3 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "bench/memory.sh: run as root" >&2; exit 1; }
VIEWS=${VIEWS:-1000} QUERIES=${QUERIES:-3000} IDLE=${IDLE:-60}
work=$(mktemp -d /tmp/mfm-bench-memory.XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	umount -l "$work/mnt" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
mfmd=${1:-}
if [ -z "$mfmd" ]; then
	mfmd="$work/mfmd"
	go build -o "$mfmd" ./cmd/mfmd
fi
cp -a examples/runs/luanti-forest/store "$work/store"
mkdir "$work/mnt"
"$mfmd" mount --store "$work/store" --no-access-log "$work/mnt" 2>"$work/log" &
pid=$!
for _ in $(seq 200); do [ -e "$work/mnt/README.md" ] && break; sleep 0.05; done
[ -e "$work/mnt/README.md" ] || { cat "$work/log" >&2; exit 1; }
rss() { awk '/^VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$pid/status"; }
echo "== $(date -u +%Y-%m-%dT%H:%MZ) $(uname -r), $(nproc) CPUs, $(git rev-parse --short HEAD), $("$mfmd" --version 2>/dev/null || basename "$mfmd"); $VIEWS views, $QUERIES queries, $IDLE s idle"
cat "$work/mnt/README.md" >/dev/null
echo "mounted: RSS $(rss) MiB"
# Distinct views: each episode's frame at zoom 2, 3, 4, 5, ... (640x480 to
# 1280x960 PNGs of a 256x192 frame).
eps=$(ls "$work/store/episodes")
start=$SECONDS
n=0
for zoom in $(seq 2 16); do
	for ep in $eps; do
		[ "$n" -ge "$VIEWS" ] && break 2
		cat "$work/mnt/episodes/$ep/observation/image@zoom=$zoom.png" >/dev/null
		n=$((n + 1))
	done
done
echo "after $n distinct views ($((SECONDS - start)) s): RSS $(rss) MiB"
start=$SECONDS
for i in $(seq "$QUERIES"); do
	cat "$work/mnt/q/last:$i/count" >/dev/null
done
echo "after $QUERIES distinct queries ($((SECONDS - start)) s): RSS $(rss) MiB"
sleep "$IDLE"
echo "after $IDLE s idle: RSS $(rss) MiB"
# With GODEBUG=gctrace=1 the daemon logs each collection: the last one's
# "A->B->C MB" has C, the heap live after it.
if grep -q '^gc ' "$work/log"; then
	echo "last collection: $(grep '^gc ' "$work/log" | tail -1)"
fi
