#!/bin/sh
# skill_stone_1: skill stone_1 of the knowledge store: dig_down → craft; verify milestone stone_1
# mfm-consolidate: generated from mine/knowledge/knowledge.json; a file without this line is never overwritten
# mfm-skill: skill-stone_1-c88387 (confidence 0.750, 3 episode(s), state active)
# mfm-evidence: previous/life_1/episodes/ep_000009 previous/life_1/episodes/ep_000010 previous/life_1/episodes/ep_000011
# mfm-verify: milestone stone_1
# mfm-trigger: gui_open=false
# It replays the calls of the skill's first supporting run with their recorded arguments.
cat <<'MFM_SKILL'
{"actions":[{"args":{"n":4},"procedure":"dig_down"},{"args":{"n":5},"procedure":"dig_down"},{"args":{"item":"pick_stone","n":1},"procedure":"craft"}],"note":"skill stone_1 [skill-stone_1-c88387]: check milestone stone_1 after it"}
MFM_SKILL
