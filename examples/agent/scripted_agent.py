#!/usr/bin/env python3
"""scripted_agent: a fixed-policy player for `mfmd play --agent-cmd`.

It reads the brief and the turn block on stdin, picks a plan for the live [GOAL] and runs
it with `mfmd act` (so it goes through the same socket and engine as any agent). It prints
nothing when it acted; with --print it prints the plan instead and the harness runs it.

With --procedure it writes mine/procedures/go_back.py and goes back to the start by calling it.
Memory: the start position comes from the record (episodes/ep_000000/state/state.json under
$MFM_MEMORY); with --notes it is also written to and read back from mine/notes.md with the
episode it came from. Goals it knows: away>=N, near start r=R, near X,Z r=R, TREE>=N.
"""
import json, math, os, re, subprocess, sys

text = sys.stdin.read().split("\n# Turn\n", 1)[-1]  # the turn block after the brief
memory = os.environ.get("MFM_MEMORY", ".")
work = os.environ.get("MFM_WORK", ".")
state_file = os.path.join(work, ".scripted_agent.json")
mem = json.load(open(state_file)) if os.path.exists(state_file) else {"dir": 0}

def start_pos():
    notes = os.path.join(memory, "mine", "notes.md")
    if "--notes" in sys.argv and os.path.exists(notes):
        m = re.search(r"start: x=(-?[\d.]+) z=(-?[\d.]+)", open(notes).read())
        if m:
            return float(m.group(1)), float(m.group(2))
    st = json.load(open(os.path.join(memory, "episodes", "ep_000000", "state", "state.json")))
    x, z = st["pos"]["x"], st["pos"]["z"]
    if "--notes" in sys.argv:
        os.makedirs(os.path.dirname(notes), exist_ok=True)
        with open(notes, "a") as f:
            f.write(f"- start: x={x} z={z} (ep_000000)\n")
    return x, z

pos = re.search(r"\[STATE\] pos=\((-?[\d.]+), (-?[\d.]+), (-?[\d.]+)\)", text)
here = (float(pos.group(1)), float(pos.group(3))) if pos else (0.0, 0.0)
goal = re.search(r"^\[GOAL\] [\w-]+: (.+?)(?: -- .*)?$", text, re.M)
when = goal.group(1) if goal else ""
failed = "FAILED" in text.split("[STATE]")[0]
if failed:
    mem["fails"] = mem.get("fails", 0) + 1
    if mem["fails"] % 2 == 0:
        mem["dir"] += 1  # blocked twice that way: try the next direction
else:
    mem["fails"] = 0

GO_BACK = '''"""go_back: walk back to a remembered place (x, z), as the record of this run has it."""
import json, sys
PARAMS = {"x": "x of the place", "z": "z of the place", "within": "how close (default 1)"}
a = json.loads(sys.argv[sys.argv.index("--args") + 1])
if "x" not in a or "z" not in a:
    raise SystemExit("go_back needs x and z")
step = {"procedure": "go_to", "args": {"x": a["x"], "z": a["z"], "within": a.get("within", 1)}}
print(json.dumps({"actions": [step], "note": "walking back to %s,%s" % (a["x"], a["z"])}))
'''

def write_go_back():
    """write the procedure into mine/procedures once (it stays for later runs)."""
    d = os.path.join(memory, "mine", "procedures")
    os.makedirs(d, exist_ok=True)
    p = os.path.join(d, "go_back.py")
    if not os.path.exists(p):
        with open(p, "w") as f:
            f.write(GO_BACK)

def walk(x, z, within):
    """go_to; after a failure first cut through what blocks (leaves, a trunk) toward the target."""
    plan = f"go_to x={x:.1f} z={z:.1f} within={within}"
    if mem.get("fails"):
        yaw = math.degrees(math.atan2(-(x - here[0]), z - here[1])) % 360
        # dig the block ahead at the feet, then at the head, and step through
        plan = (f'look_abs yaw={yaw:.0f} pitch=40; {{"attack":1}} x25; look_abs yaw={yaw:.0f} pitch=0; '
                f'{{"attack":1}} x25; {{"forward":1,"jump":1}} x10; ' + plan)
    return plan

dirs = [(1, 0), (0, 1), (-1, 0), (0, -1)]
plan = "watch ticks=20"
if m := re.search(r"away>=(\d+)", when):
    n = float(m.group(1)) + 2
    sx, sz = start_pos()
    dx, dz = dirs[mem["dir"] % 4]
    plan = walk(sx + dx * n, sz + dz * n, 1)
elif m := re.search(r"near start r=([\d.]+)", when):
    sx, sz = start_pos()
    plan = walk(sx, sz, min(float(m.group(1)) / 2, 1.0))
    if "--procedure" in sys.argv and not mem.get("fails"):
        plan = "go_back " + plan.split(" ", 1)[1]
        write_go_back()
elif m := re.search(r"near (-?[\d.]+),\s*(-?[\d.]+) r=([\d.]+)$", when):
    plan = walk(float(m.group(1)), float(m.group(2)), min(float(m.group(3)) / 2, 1.0))
elif re.match(r"tree>=\d+", when):
    t = re.search(r"nearest tree: tree at (-?\d+),(-?\d+),(-?\d+)", text)
    if t:
        x, y, z = (int(v) for v in t.groups())
        plan = walk(x, z, 1.5) + f"; look_at x={x} y={y + 1} z={z}; mine_ahead; collect_drops item=tree"
    else:
        plan = "scan_around"
json.dump(mem, open(state_file, "w"))

if "--print" in sys.argv:
    print(plan)
else:
    r = subprocess.run(["mfmd", "act", plan], capture_output=True, text=True)
    sys.stderr.write(r.stdout + r.stderr)
