#!/bin/sh
# skill_get_stick: skill get_stick of the knowledge store: collect_drops → craft; verify inv_ge stick 2
# mfm-consolidate: generated from mine/knowledge/knowledge.json; a file without this line is never overwritten
# mfm-skill: skill-get_stick-6403cf (confidence 0.800, 4 episode(s), state active)
# mfm-evidence: previous/life_1/episodes/ep_000004 previous/life_1/episodes/ep_000005 previous/life_1/episodes/ep_000006 previous/life_1/episodes/ep_000007
# mfm-verify: inv_ge stick 2
# mfm-trigger: gui_open=false, item=stick
# It replays the calls of the skill's first supporting run with their recorded arguments.
cat <<'MFM_SKILL'
{"actions":[{"args":{"item":"tree"},"procedure":"collect_drops"},{"args":{"item":"wood","n":2},"procedure":"craft"},{"args":{"item":"stick","n":1},"procedure":"craft"},{"args":{"item":"pick_wood","n":1},"procedure":"craft"}],"note":"skill get_stick [skill-get_stick-6403cf]: check inv_ge stick 2 after it"}
MFM_SKILL
