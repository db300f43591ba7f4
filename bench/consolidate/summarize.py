#!/usr/bin/env python3
"""Summarize a run.sh output directory (bench/consolidate/README in bench/consolidate.md).

For each condition and life: steps to each milestone (mean over the offsets),
turns, and the memory offers: turns with a failed call, offers, entries offered
by kind, entries the next plan used by kind, and the accepted K entries at the
end with their evidence episodes."""
import json, os, sys, glob, statistics

out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/consol-bench"
rows = {}
for d in sorted(glob.glob(os.path.join(out, "*-[0-9]"))):
    cond, off = os.path.basename(d).rsplit("-", 1)
    for life in (1, 2):
        p = os.path.join(d, "run-life%d.json" % life)
        if not os.path.exists(p):
            continue
        r = json.load(open(p))
        ms = {m["name"]: m.get("steps_from_start") for m in r["milestones"]}
        offered, used = {"skill": 0, "remedy": 0}, {"skill": 0, "remedy": 0}
        offers = failed = 0
        for t in r["turns"]:
            if any(e["outcome"] == "failed" for e in t["entries"]):
                failed += 1
            m = t.get("memory")
            if not m:
                continue
            offers += 1
            kinds = {e["id"]: e["kind"] for e in m["entries"]}
            for e in m["entries"]:
                offered[e["kind"]] += 1
            for u in m.get("used") or []:
                used[kinds[u]] += 1
        rows.setdefault((cond, life), []).append(dict(off=int(off), steps=r["steps_used"], turns=len(r["turns"]), ms=ms,
            failed=failed, offers=offers, offered=offered, used=used, done=r["termination"] == "done"))

names = ["log", "planks", "sticks", "pickaxe"]
print("| condition | life | runs done | steps (mean) | steps per offset 0..7 | " + " | ".join("to %s" % n for n in names) +
      " | turns | failed turns | offers | skills offered / used | remedies offered / used |")
print("|" + " --- |" * (10 + len(names)))
for (cond, life), rs in rows.items():
    rs.sort(key=lambda x: x["off"])
    mean = lambda k: statistics.mean(x[k] for x in rs)
    mm = [statistics.mean(x["ms"][n] for x in rs) for n in names]
    so, su = sum(x["offered"]["skill"] for x in rs), sum(x["used"]["skill"] for x in rs)
    ro, ru = sum(x["offered"]["remedy"] for x in rs), sum(x["used"]["remedy"] for x in rs)
    print("| %s | %d | %d/%d | %.1f | %s | %s | %.1f | %d | %d | %d / %d | %d / %d |" % (cond, life, sum(x["done"] for x in rs), len(rs),
        mean("steps"), " ".join(str(x["steps"]) for x in rs), " | ".join("%.1f" % v for v in mm), mean("turns"),
        sum(x["failed"] for x in rs), sum(x["offers"] for x in rs), so, su, ro, ru))
