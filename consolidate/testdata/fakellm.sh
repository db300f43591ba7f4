#!/bin/sh
# fakellm.sh: a scripted stand-in for a language model, for tests of
# --llm-cmd. It reads the prompt on stdin, tells the induce prompt from the
# curate prompt by its first words, copies it to $FAKE_LLM_LOG.induce or
# $FAKE_LLM_LOG.curate when FAKE_LLM_LOG is set, and answers as
# FAKE_LLM_MODE says (good, fenced, reject, malformed, shape, fail, sleep,
# curatebad).
in=$(cat)
case "$in" in
"You are the Inducer"*) stage=induce ;;
"You are the Curator"*) stage=curate ;;
*) echo "fakellm: not a prompt I know" >&2; exit 9 ;;
esac
if [ -n "$FAKE_LLM_LOG" ]; then printf '%s\n' "$in" > "$FAKE_LLM_LOG.$stage"; fi
mode=${FAKE_LLM_MODE:-good}
case "$mode.$stage" in
good.induce|curatebad.induce)
	cat <<'JSON'
{"candidates": [
 {"kind": "skill", "name": "tower_up", "trigger": {"gui_open": "false", "item": "dirt"},
  "steps": ["pillar_up"], "verify": "milestone high_1", "effects": ["milestone high_1"],
  "support": [{"life": 1, "id": "ep_6"}], "confidence": 0.7,
  "id": "made-up", "status": "accepted", "support_count": 99}
]}
JSON
	;;
good.curate)
	id=$(printf '%s' "$in" | grep -o 'skill-get_log-[0-9a-f]*' | head -n 1)
	printf '{"reject": [{"id": "%s", "reason": "logs are counted twice"}, {"id": "nope", "reason": "x"}]}\n' "$id"
	;;
fenced.induce)
	printf '```json\n{"candidates": []}\n```\n'
	;;
fenced.curate|reject.curate)
	echo '{"reject": []}'
	;;
reject.induce)
	cat <<'JSON'
{"candidates": [
 {"kind": "remedy", "name": "unstick", "trigger": {"call": "go_to", "failure": "NAV_STUCK", "item": "dirt"}, "failure_type": "NAV_STUCK",
  "repair": ["try again"], "support": [{"life": 1, "id": "ep_000003"}], "confidence": 0.9},
 {"kind": "skill", "name": "ghost", "trigger": {"item": "log", "call": "harvest_tree"}, "steps": ["harvest_tree"], "verify": "inv_ge log 1",
  "support": [{"life": 1, "id": "ep_000999"}], "confidence": 0.9},
 {"kind": "skill", "name": "beam", "trigger": {"call": "go_to", "item": "log"}, "steps": ["teleport"], "verify": "inv_ge log 1",
  "support": [{"life": 1, "id": "ep_000001"}], "confidence": 0.9}
]}
JSON
	;;
malformed.induce)
	echo 'Sure! Here are the candidates: {"candidates": ['
	;;
shape.induce)
	echo '{"answer": 42}'
	;;
fail.induce)
	echo "model unavailable" >&2
	exit 3
	;;
sleep.induce)
	sleep 30
	echo '{"candidates": []}'
	;;
curatebad.curate)
	echo 'no'
	;;
*)
	echo "fakellm: no answer for $mode.$stage" >&2
	exit 8
	;;
esac
