#!/bin/sh
# skill_wooden_pickaxe_0ac163: skill wooden_pickaxe of the knowledge store: collect_drops → craft; verify milestone wooden_pickaxe
# mfm-consolidate: generated from mine/knowledge/knowledge.json; a file without this line is never overwritten
# mfm-skill: skill-wooden_pickaxe-0ac163 (confidence 0.800, 4 episode(s), state active)
# mfm-evidence: ep_000002 ep_000003 ep_000004 ep_000005
# mfm-verify: milestone wooden_pickaxe
# mfm-trigger: gui_open=false, subgoal=log
# It replays the calls of the skill's first supporting run with their recorded arguments.
cat <<'MFM_SKILL'
{"actions":[{"args":{"item":"tree"},"procedure":"collect_drops"},{"args":{"item":"wood","n":4},"procedure":"craft"},{"args":{"item":"stick","n":4},"procedure":"craft"},{"args":{"item":"pick_wood","n":1},"procedure":"craft"}],"note":"skill wooden_pickaxe [skill-wooden_pickaxe-0ac163]: check milestone wooden_pickaxe after it"}
MFM_SKILL
