#!/bin/sh
# skill_cobblestone: skill cobblestone of the knowledge store: dig_down; verify milestone cobblestone
# mfm-consolidate: generated from mine/knowledge/knowledge.json; a file without this line is never overwritten
# mfm-skill: skill-cobblestone-67dde1 (confidence 0.667, 2 episode(s), state active)
# mfm-evidence: previous/life_1/episodes/ep_000009 previous/life_1/episodes/ep_000010
# mfm-verify: milestone cobblestone
# mfm-trigger: gui_open=false, subgoal=cobblestone
# It replays the calls of the skill's first supporting run with their recorded arguments.
cat <<'MFM_SKILL'
{"actions":[{"args":{"n":4},"procedure":"dig_down"},{"args":{"n":5},"procedure":"dig_down"}],"note":"skill cobblestone [skill-cobblestone-67dde1]: check milestone cobblestone after it"}
MFM_SKILL
