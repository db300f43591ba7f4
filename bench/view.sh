#!/bin/bash
# Views side by side with ImageMagick, in process and through the mount.
# Usage: bench/view.sh  (from the repository root; needs ImageMagick's convert
# and montage in /usr/bin — installed from Debian's imagemagick package when run
# as root and missing — and root for the mount).
# Prints the figures recorded in bench/view.md.
set -euo pipefail
cd "$(dirname "$0")/.."
STORE=$PWD/examples/runs/luanti-forest/store
CONVERT=/usr/bin/convert MONTAGE=/usr/bin/montage
if { [ ! -x $CONVERT ] || [ ! -x $MONTAGE ]; } && [ "$(id -u)" = 0 ]; then
	apt-get install -y imagemagick >/dev/null || { apt-get update >/dev/null && apt-get install -y imagemagick >/dev/null; }
fi
for b in $CONVERT $MONTAGE; do
	[ -x $b ] || { echo "bench/view.sh: $b missing: apt-get install -y imagemagick" >&2; exit 1; }
done
TMP=$(mktemp -d)
MNT=$TMP/mnt
PID=
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
	mountpoint -q "$MNT" 2>/dev/null && umount -l "$MNT" || true
	rm -rf "$TMP"
}
trap cleanup EXIT

echo "== in process (go test -bench, 200 runs each)"
go test -run xxx -bench 'CropZoom|Sheet16|MapHere' -benchtime 200x ./view/ | grep ^Bench

# p50 of N runs of a command, in ms.
p50() {
	local n=$1
	shift
	python3 - "$n" "$@" <<'EOF'
import subprocess, sys, time
n, cmd = int(sys.argv[1]), sys.argv[2:]
subprocess.run(cmd, check=True, capture_output=True)  # warm the page cache
ts = []
for _ in range(n):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    ts.append((time.perf_counter() - t) * 1000)
ts.sort()
print(f"{ts[len(ts)//2]:.1f} ms (p50 of {n}, min {ts[0]:.1f})")
EOF
}

echo "== ImageMagick, per process"
F=$STORE/episodes/ep_000011/observation/image.png
echo -n "convert crop 64x48+64+48 -sample 400% png: "
p50 20 $CONVERT "$F" -crop 64x48+64+48 +repage -sample 400% "$TMP/cz.png"
FRAMES=()
for i in $(seq 1 16); do FRAMES+=("$STORE/episodes/$(printf ep_%06d "$i")/observation/image.png"); done
echo -n "montage 16 tiles 4x4 240x180, labelled: "
p50 5 $MONTAGE -label '%d' "${FRAMES[@]}" -tile 4x4 -geometry 240x180+2+2 -background '#101010' -fill white "$TMP/m.png"
echo -n "montage 16 tiles 4x4 240x180, no labels: "
p50 5 $MONTAGE "${FRAMES[@]}" -tile 4x4 -geometry 240x180+2+2 -background '#101010' "$TMP/m2.png"

echo "== through the mount (mfmd mount, open+read+close from Python)"
go build -o "$TMP/mfmd" ./cmd/mfmd
mkdir -p "$MNT"
"$TMP/mfmd" mount --store "$STORE" --read-only --no-access-log "$MNT" 2>"$TMP/mount.log" &
PID=$!
for _ in $(seq 100); do [ -e "$MNT/README.md" ] && break; sleep 0.1; done
[ -e "$MNT/README.md" ] || { cat "$TMP/mount.log"; exit 1; }
python3 - "$MNT" <<'EOF'
import sys, time
mnt = sys.argv[1]
def read(rel):
    t = time.perf_counter()
    with open(f"{mnt}/{rel}", "rb") as f:
        n = len(f.read())
    return (time.perf_counter() - t) * 1000, n
def p50(ts):
    ts = sorted(ts)
    return f"{ts[len(ts)//2]:.3f} ms (p50 of {len(ts)}, min {ts[0]:.3f})"
frame = "episodes/ep_000011/observation/image"
read(f"{frame}.png")
# cold: a fresh name every time. Same frame (the decoded frame is cached after the first) ...
same = [read(f"{frame}@crop={64+i},48,64,48@zoom=4.png")[0] for i in range(1, 61)]
# ... and a different frame each time (decode included).
diff = [read(f"episodes/ep_{i:06d}/observation/image@crop=64,48,64,48@zoom=4.png")[0] for i in range(100, 160)]
name = f"{frame}@crop=64,48,64,48@zoom=4.png"
read(name)
cached = [read(name)[0] for _ in range(200)]
plain = [read(f"{frame}.png")[0] for _ in range(200)]
sheet = [read(f"episodes/ep_{i:06d}/sheet.png")[0] for i in range(160, 170)]
sheet_cached = [read("episodes/ep_000160/sheet.png")[0] for _ in range(50)]
m = [read(f"map/at={-257+i},-139.png")[0] for i in range(20)]
mt = [read(f"map/at={-257+i},-139.txt")[0] for i in range(20)]
m_cached = [read("map/at=-257,-139.png")[0] for _ in range(100)]
# a 16-tile contact sheet of a query's matches (q/…/sheet.png), when queries are served
try:
    qs = [read(f"q/steps:{100+i}..2000 last:16/sheet.png")[0] for i in range(5)]
    qs_cached = [read("q/steps:100..2000 last:16/sheet.png")[0] for _ in range(20)]
    print("q/<query>/sheet.png, 16 tiles, fresh:", p50(qs), " again:", p50(qs_cached))
except OSError as e:
    print("q/<query>/sheet.png: not served:", e)
print("crop+zoom x4, fresh name, frame decoded before:", p50(same))
print("crop+zoom x4, fresh name, frame not decoded before:", p50(diff))
print("crop+zoom x4, the same name again (cached):", p50(cached))
print("the frame itself (a plain file through the mount):", p50(plain))
print("episode contact sheet, fresh:", p50(sheet), " cached:", p50(sheet_cached))
print("map png, fresh centre:", p50(m), " txt:", p50(mt), " png cached:", p50(m_cached))
EOF
