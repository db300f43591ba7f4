"""dig_for_cobble: equip the wooden pickaxe and dig straight down n blocks (default 8 = grass plant + 4 dirt + 3 stone near -67,191; EXPECT it to report "went only n-1 down" because the plant counts: check cobble>=3, then craft in the next call) to collect cobble."""
import json, sys
PARAMS = {"n": "blocks to dig down (default 8: enough for 3 cobble at -67,191)"}
args = {}
if "--args" in sys.argv:
    i = sys.argv.index("--args")
    if i + 1 < len(sys.argv):
        args = json.loads(sys.argv[i + 1])
n = int(args.get("n", 8))
state = json.load(sys.stdin)
st = state.get("state", state)
inv = st.get("inventory", {})
tool = "pick_stone" if inv.get("pick_stone") else "pick_wood"
if not inv.get(tool):
    print("no pickaxe in the inventory: craft pick_wood first", file=sys.stderr)
    sys.exit(1)
print(json.dumps({"actions": [
    {"procedure": "equip", "args": {"item": tool}},
    {"procedure": "dig_down", "args": {"n": n}, "why": "dirt ~4 deep, then stone -> cobble (previous/life_1/episodes/ep_000009, previous/life_1/episodes/ep_000010; life 2 ep_000007)"},
]}))
