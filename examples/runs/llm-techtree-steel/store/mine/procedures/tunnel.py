"""tunnel: equip a stone pickaxe and dig a 1x2 tunnel straight ahead by holding attack+forward (pitch 35)."""
import json, sys
PARAMS = {"yaw": "absolute yaw to tunnel toward (0=+z, 90=-x, 180=-z, 270=+x)", "ticks": "ticks to hold attack+forward (<=300)"}
args = {}
argv = sys.argv[1:]
if "--args" in argv:
    for a in argv[argv.index("--args") + 1:]:
        a = a.strip()
        if a.startswith("{"):
            args.update(json.loads(a))
        elif "=" in a:
            k, v = a.split("=", 1); args[k] = v
try:
    state = json.load(sys.stdin)
except Exception:
    state = {}
yaw = float(args.get("yaw", 270))
ticks = int(args.get("ticks", 300))
if ticks > 330:
    print("ticks must be <= 330 to fit the 400-step plan cap", file=sys.stderr); sys.exit(1)
print(json.dumps({"actions": [
    {"procedure": "equip", "args": {"item": "pick_stone"}, "why": "pickaxes break; re-equip a spare"},
    {"procedure": "look_abs", "args": {"yaw": yaw, "pitch": 35}},
    {"action": {"attack": 1, "forward": 1}, "repeat": ticks, "why": "1x2 tunnel, events name ores mined"}]}))
