"""wood_to_pick: from the start spot (-68,12.5,188 yaw 340, crosshair already on a trunk) mine 1 log, pick it up, craft 4 wood, 4 sticks, 1 wooden pickaxe (agent ada, same start; ben ep_000001..ep_000005, 48 steps)."""
import json, sys

PARAMS = {"logs": "how many logs to mine first (default 1; 1 log is enough for pick_wood + stone tool sticks)"}

state = json.load(sys.stdin)
args = {}
if "--args" in sys.argv:
    args = json.loads(sys.argv[sys.argv.index("--args") + 1] or "{}")
logs = int(args.get("logs", 1))
if state.get("pointed") != "tree":
    raise SystemExit("crosshair is not on a tree (pointed=%r): look_at the trunk first (start trunk: -67,14,192 and -67,15,192)" % state.get("pointed"))
acts = []
for _ in range(logs):
    acts += [{"procedure": "mine_ahead"}, {"procedure": "collect_drops", "args": {"item": "tree"}}]
acts += [
    {"procedure": "craft", "args": {"item": "wood", "n": 1}},
    {"procedure": "craft", "args": {"item": "stick", "n": 1}},
    {"procedure": "craft", "args": {"item": "pick_wood", "n": 1}},
]
print(json.dumps({"actions": acts}))
