#!/bin/sh
# skill_wooden_pickaxe: skill wooden_pickaxe of the knowledge store: collect_drops → craft; verify milestone wooden_pickaxe
# mfm-consolidate: generated from mine/knowledge/knowledge.json; a file without this line is never overwritten
# mfm-skill: skill-wooden_pickaxe-7decff (confidence 0.800, 4 episode(s), state active)
# mfm-evidence: previous/life_1/episodes/ep_000004 previous/life_1/episodes/ep_000005 previous/life_1/episodes/ep_000006 previous/life_1/episodes/ep_000007
# mfm-verify: milestone wooden_pickaxe
# mfm-trigger: gui_open=false, subgoal=planks
# It replays the calls of the skill's first supporting run with their recorded arguments.
cat <<'MFM_SKILL'
{"actions":[{"args":{"item":"tree"},"procedure":"collect_drops"},{"args":{"item":"wood","n":2},"procedure":"craft"},{"args":{"item":"stick","n":1},"procedure":"craft"},{"args":{"item":"pick_wood","n":1},"procedure":"craft"}],"note":"skill wooden_pickaxe [skill-wooden_pickaxe-7decff]: check milestone wooden_pickaxe after it"}
MFM_SKILL
