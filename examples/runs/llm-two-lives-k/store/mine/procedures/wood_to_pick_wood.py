"""wood_to_pick_wood: punch the trunk under the crosshair, pick it up, craft 4 wood, 4 sticks, a wooden pickaxe (1 tree is enough)."""
import json, sys
PARAMS = {}
state = json.load(sys.stdin)
st = state.get("state", state)
if st.get("pointed") != "tree":
    print("crosshair is not on a tree (pointed=%r): scan_around / look_at a trunk first" % st.get("pointed"), file=sys.stderr)
    sys.exit(1)
print(json.dumps({"actions": [
    {"procedure": "mine_ahead", "why": "trunk under crosshair (ep_000001)"},
    {"procedure": "collect_drops", "args": {"item": "tree"}},
    {"procedure": "craft", "args": {"item": "wood", "n": 4}, "why": "1 tree -> 4 wood (ep_000005)"},
    {"procedure": "craft", "args": {"item": "stick", "n": 4}, "why": "1 wood -> 4 sticks (ep_000006)"},
    {"procedure": "craft", "args": {"item": "pick_wood", "n": 1}, "why": "3 wood + 2 sticks (ep_000007)"},
]}))
