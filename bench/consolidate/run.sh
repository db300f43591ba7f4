#!/bin/sh
# Two lives of the scripted agent (agent.py) in the sim world on the task
# sim-pickaxe.json, through mfmd play --agent-cmd, under four conditions,
# for each waypoint offset (the agent's seed) 0..7. Prints one TSV line
# per life; keeps each life's run.json and the final K under OUT.
#   full     --consolidate-every 3 both lives; life 2 reads [MEMORY]
#   control  the same, but in life 2 the agent ignores [MEMORY]
#   static   --consolidate-every 3 --static-k (K frozen: empty here)
#   none     no memory loop (no consolidation, no offers)
# Usage: bench/consolidate/run.sh [OUT]   (default /tmp/consol-bench)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-/tmp/consol-bench}
mkdir -p "$out"
bin="$out/mfmd"
(cd "$root" && go build -o "$bin" ./cmd/mfmd)
task="$here/sim-pickaxe.json"
printf 'condition\toffset\tlife\ttermination\tsteps\tturns\tmilestone_steps\tfailed_turns\toffers\toffers_with_entries\toffered_entries\tused\tsuffix_used\tconsolidations\tk_active\tprocedures\n'
for cond in full control static none; do
  for off in 0 1 2 3 4 5 6 7; do
    d="$out/$cond-$off"
    rm -rf "$d"; mkdir -p "$d"
    case $cond in
      full|control) flags="--consolidate-every 3" ;;
      static) flags="--consolidate-every 3 --static-k" ;;
      none) flags="" ;;
    esac
    for life in 1 2; do
      ignore=0
      [ "$cond" = control ] && [ "$life" = 2 ] && ignore=1
      if [ "$life" = 2 ]; then "$bin" life new --store "$d/store" >/dev/null; fi
      rm -f "$d/agent-state.json"
      (cd "$d" && AGENT_IGNORE_MEMORY=$ignore AGENT_WP_OFFSET=$off "$bin" play --world sim --task "$task" --work "$d" \
        --agent-cmd "python3 $here/agent.py" --max-turns 40 $flags >"$d/play-$life.log" 2>&1)
      cp "$d/store/run.json" "$d/run-life$life.json"
      kact=0
      [ -f "$d/store/mine/knowledge/knowledge.json" ] && kact=$(jq '[.entries[]|select(.state=="active")]|length' "$d/store/mine/knowledge/knowledge.json")
      procs=$(ls "$d/store/mine/procedures" 2>/dev/null | tr '\n' ' ')
      jq -r --arg c "$cond" --arg o "$off" --arg l "$life" --arg k "$kact" --arg p "${procs:-}" '
        [$c, $o, $l, .termination, .steps_used, (.turns|length),
         ([.milestones[]|"\(.name)@\(.steps_from_start // "-")"]|join(",")),
         ([.turns[]|select(any(.entries[]; .outcome=="failed"))]|length),
         ([.turns[]|select(.memory)]|length),
         ([.turns[]|select(.memory and (.memory.entries|length)>0)]|length),
         ([.turns[]|.memory.entries // []|length]|add // 0),
         ([.turns[]|.memory.used // []|length]|add // 0),
         ([.turns[]|select(.memory.suffix_used)]|length),
         ((.consolidations // [])|length), $k, $p] | @tsv' "$d/run-life$life.json"
    done
  done
done
