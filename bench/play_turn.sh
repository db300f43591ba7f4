#!/usr/bin/env bash
# Turn latency of `mfmd act` against a `mfmd play` session on the sim world: the process
# start, the socket round trip and the engine (one atom of 2 steps recorded into the store,
# run.json rewritten). Game ticks are not included: see bench/play.md for the live figures.
# Usage: bench/play_turn.sh [N]   (from the repository root)
set -euo pipefail
n=${1:-40}
root=$(pwd)
tmp=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/mfmd" ./cmd/mfmd
cat > "$tmp/bench.json" <<'JSON'
{"name": "bench", "instruction": "bench", "budget": 100000000, "milestones": [{"name": "never", "when": "tree>=99"}]}
JSON
cd "$tmp"
./mfmd play --task ./bench.json --world sim --work . --socket "$tmp/p.sock" >play.out 2>&1 &
pid=$!
for _ in $(seq 100); do [ -S "$tmp/p.sock" ] && break; sleep 0.1; done
export MFM_PLAY_SOCKET=$tmp/p.sock
N=$n python3 - <<'PY'
import os, statistics, subprocess, time
n = int(os.environ["N"])
def run(args):
    ts = []
    for i in range(n):
        a = [x.replace("YAW", str(i * 7 % 360)) for x in args]
        t = time.perf_counter()
        subprocess.run(["./mfmd", "act"] + a, capture_output=True, check=True)
        ts.append((time.perf_counter() - t) * 1000)
    ts.sort()
    return "median %.1f ms, p10 %.1f, p90 %.1f (n=%d)" % (statistics.median(ts), ts[n // 10], ts[n * 9 // 10], n)
print("mfmd act 'look_abs yaw=N' (sim, 1 atom, 2 steps):", run(["look_abs yaw=YAW"]))
print("mfmd act --status:", run(["--status"]))
PY
