#!/bin/sh
# skill_stone_pickaxe: skill stone_pickaxe of the knowledge store: dig_down → craft; verify milestone stone_pickaxe
# mfm-consolidate: generated from mine/knowledge/knowledge.json; a file without this line is never overwritten
# mfm-skill: skill-stone_pickaxe-fdc4e3 (confidence 0.833, 5 episode(s), state active)
# mfm-evidence: previous/life_1/episodes/ep_000009 previous/life_1/episodes/ep_000010 previous/life_1/episodes/ep_000011 ep_000007 ep_000008
# mfm-verify: milestone stone_pickaxe
# mfm-trigger: gui_open=false, subgoal=cobblestone
# It replays the calls of the skill's first supporting run with their recorded arguments.
cat <<'MFM_SKILL'
{"actions":[{"args":{"n":4},"procedure":"dig_down"},{"args":{"n":5},"procedure":"dig_down"},{"args":{"item":"pick_stone","n":1},"procedure":"craft"}],"note":"skill stone_pickaxe [skill-stone_pickaxe-fdc4e3]: check milestone stone_pickaxe after it"}
MFM_SKILL
