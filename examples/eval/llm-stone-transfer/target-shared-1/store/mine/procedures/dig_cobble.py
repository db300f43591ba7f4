"""dig_cobble: equip the wooden pickaxe, clear the plant/block under the feet, dig straight down into stone (at -67,191: plant y14, dirt_with_grass y13, dirt y12..10, stone y9 down), optionally craft a stone tool (first run by agent ada; ben ep_000006..ep_000010 with n=9 craft=pick_stone)."""
import json, sys

PARAMS = {"n": "blocks to dig down after the plant (default 9: 4 dirt + 5 stone at -67,191 -> 5 cobble)",
          "craft": "item to craft at the end, e.g. axe_stone or pick_stone (default none)"}

state = json.load(sys.stdin)
args = {}
if "--args" in sys.argv:
    args = json.loads(sys.argv[sys.argv.index("--args") + 1] or "{}")
n = int(args.get("n", 9))
inv = state.get("inventory") or {}
if not inv.get("pick_wood") and not inv.get("pick_stone") and state.get("mainhand") not in ("pick_wood", "pick_stone"):
    raise SystemExit("no pickaxe in the inventory: run wood_to_pick first")
acts = [
    {"procedure": "equip", "args": {"item": "pick_stone" if inv.get("pick_stone") else "pick_wood"}},
    # a grass plant under the crosshair makes dig_down fail ("went only 2.0 down", ep_000009): break it first
    {"procedure": "look_abs", "args": {"yaw": state.get("pos", {}).get("yaw", 0), "pitch": 89}},
    {"procedure": "mine_ahead"},
    {"procedure": "dig_down", "args": {"n": n}},
]
if args.get("craft"):
    acts.append({"procedure": "craft", "args": {"item": args["craft"], "n": 1}})
print(json.dumps({"actions": acts}))
