#!/bin/sh
# skill_pickaxe: skill pickaxe of the knowledge store: mine_ahead → craft; verify milestone pickaxe
# mfm-consolidate: generated from mine/knowledge/knowledge.json; a file without this line is never overwritten
# mfm-skill: skill-pickaxe-8c5b04 (confidence 0.889, 8 episode(s), state active)
# mfm-evidence: previous/life_1/episodes/ep_000006 previous/life_1/episodes/ep_000007 previous/life_1/episodes/ep_000008 previous/life_1/episodes/ep_000009 ep_000003 ep_000004 ep_000005 ep_000006
# mfm-verify: milestone pickaxe
# mfm-trigger: gui_open=false, subgoal=log
# It replays the calls of the skill's first supporting run with their recorded arguments.
cat <<'MFM_SKILL'
{"actions":[{"args":{"within":1,"x":5,"z":0},"procedure":"go_to"},{"args":{},"procedure":"mine_ahead"},{"args":{"item":"wood","n":1},"procedure":"craft"},{"args":{"item":"stick","n":1},"procedure":"craft"},{"args":{"item":"pick_wood","n":1},"procedure":"craft"}],"note":"skill pickaxe [skill-pickaxe-8c5b04]: check milestone pickaxe after it"}
MFM_SKILL
