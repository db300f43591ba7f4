#!/usr/bin/env python3
"""scripted_agent: a fixed-policy player for `mfmd play --agent-cmd`.

It reads the brief and the turn block on stdin, picks a plan for the live [GOAL] and runs
it with `mfmd act` (so it goes through the same socket and engine as any agent). It prints
nothing when it acted; with --print it prints the plan instead and the harness runs it.

With --procedure it writes mine/procedures/go_back.py and goes back to the start by calling it.
Memory: the start position comes from the record (episodes/ep_000000/state/state.json under
$MFM_MEMORY). With --notes its memory is mine/ only: at its first turn it writes the start to
mine/notes.md with the episode it came from, and it knows the start later only from there.
With --empty-mine (the control condition) it writes nothing in mine/, so a goal at an unknown
place (near start r=R) is searched for: a square spiral around where the goal was given,
legs growing by 2R blocks, one leg per turn (a blocked leg is tried once more, digging
through, then skipped), until the goal is reached.
Goals it knows: away>=N, near start r=R, near X,Z r=R, TREE>=N.
"""
import json, math, os, re, subprocess, sys

text = sys.stdin.read().split("\n# Turn\n", 1)[-1]  # the turn block after the brief
memory = os.environ.get("MFM_MEMORY", ".")
work = os.environ.get("MFM_WORK", ".")
state_file = os.path.join(work, ".scripted_agent.json")
mem = json.load(open(state_file)) if os.path.exists(state_file) else {"dir": 0}

NOTES = "--notes" in sys.argv
EMPTY_MINE = "--empty-mine" in sys.argv
notes = os.path.join(memory, "mine", "notes.md")

def recorded_start():
    st = json.load(open(os.path.join(memory, "episodes", "ep_000000", "state", "state.json")))
    return st["pos"]["x"], st["pos"]["z"]

def noted_start():
    """the start as mine/notes.md has it (None when it is not there)."""
    if os.path.exists(notes):
        m = re.search(r"start: x=(-?[\d.]+) z=(-?[\d.]+)", open(notes).read())
        if m:
            return float(m.group(1)), float(m.group(2))
    return None

def start_pos():
    """the start, or None when the agent's memory does not hold it."""
    if NOTES or EMPTY_MINE:
        return noted_start()
    return recorded_start()

if NOTES and not EMPTY_MINE and not mem.get("noted"):
    # the first turn: note the start, citing the episode it comes from
    if noted_start() is None:
        x, z = recorded_start()
        os.makedirs(os.path.dirname(notes), exist_ok=True)
        with open(notes, "a") as f:
            f.write(f"- start: x={x} z={z} (ep_000000)\n")
    mem["noted"] = True

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

def search(r):
    """the next leg of a square spiral around where the search began (E, N, W, S; legs of
    d, d, 2d, 2d, 3d, ... blocks, d = 2r, the goal's diameter, so the sweep passes within r of
    every point): the agent does not know where the place is. A blocked leg is tried once
    more, digging through what blocks (walk), then skipped."""
    if "center" not in mem:
        mem["center"], mem["leg"] = list(here), 0
    elif not failed or mem["fails"] >= 2:
        mem["leg"], mem["fails"] = mem["leg"] + 1, 0
    x, z = mem["center"]
    for i in range(mem["leg"] + 1):
        dx, dz = dirs[i % 4]
        n = 2 * r * (i // 2 + 1)
        x, z = x + dx * n, z + dz * n
    return walk(x, z, 1)

dirs = [(1, 0), (0, 1), (-1, 0), (0, -1)]
plan = "watch ticks=20"
if m := re.search(r"away>=(\d+)", when):
    n = float(m.group(1)) + 2
    dx, dz = dirs[mem["dir"] % 4]
    if "origin" not in mem:
        mem["origin"] = list(here)  # where this goal was given (the start at the first turn)
    plan = walk(mem["origin"][0] + dx * n, mem["origin"][1] + dz * n, 1)
elif m := re.search(r"near start r=([\d.]+)", when):
    start = start_pos()
    if start is None:
        plan = search(float(m.group(1)))
    else:
        sx, sz = start
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
