"""Tests of mfm_record against the real mfmd (MFMD=PATH, else mfmd on PATH).

Each test makes one of the mistakes a harness makes, on purpose, and checks
the recorder answers it with a clear error (or, for a state field left out,
carries the field over), and that `mfmd fsck` finds the store clean after.

    MFMD=/path/to/mfmd python3 -m unittest -v test_mfm_record
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mfm_record import (Recorder, RecorderDied, RecorderTimeout, RequestRejected,  # noqa: E402
                        StoreLocked, find_mfmd)
from fake_game import frame  # noqa: E402

FULL = {"step": 0, "x": 0.5, "y": 64.0, "z": 0.5, "yaw": 0, "pitch": 0, "health": 20.0,
        "inventory": {"log": 3}, "milestones": []}


class RecorderTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="mfm-py-")
        self.store = os.path.join(self.tmp, "store")
        self.mfmd = find_mfmd()

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def fsck_clean(self):
        p = subprocess.run([self.mfmd, "fsck", self.store], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(" 0 error(s)", p.stdout)

    def read(self, rel):
        with open(os.path.join(self.store, rel)) as f:
            return json.load(f)

    def rejected(self, fn, *fragments):
        """fn() raises RequestRejected whose error holds every fragment."""
        with self.assertRaises(RequestRejected) as cm:
            fn()
        for f in fragments:
            self.assertIn(f, cm.exception.error)
        return cm.exception

    def test_missing_fields_are_carried_over(self):
        with Recorder(self.store, init=True) as rec:
            rec.initial(FULL)
            with rec.episode("walk") as ep:
                ep.step({"step": 1, "x": 1.5})  # no health, y, inventory
            row = ep.row
        out = self.read("episodes/ep_000001/outcome.json")
        self.assertFalse(out["died"])
        self.assertEqual(out["damage"], 0.0)
        self.assertEqual(out["descended"], 0.0)
        self.assertEqual(out["inventory_delta"], {})
        self.assertEqual(out["end_state"]["vitals"]["health"], 20.0)
        self.assertNotIn("death", row["tags"])
        self.fsck_clean()

    def test_key_names_are_exact(self):
        with Recorder(self.store, init=True) as rec:
            rec.initial(FULL)
            with rec.episode("walk") as ep:
                e = self.rejected(lambda: rec.request("step", State={"step": 1}),
                                  'unknown field "State" in the request', 'case-sensitive: "state"')
                self.assertEqual(e.line, 3)
                self.rejected(lambda: ep.step({"step": 1, "pos": [1, 2, 3]}), 'unknown field "pos" in state')
                self.rejected(lambda: ep.step({"step": 1}, cells=[
                    {"cell": [0, 64, 1], "kind": "placed"}, {"cell": [0, 64, 1], "kind": "placed"},
                    {"cell": [0, 64, 1], "kind": "placed", "pos": 1}]), 'unknown field "pos" in cells[2]')
                ep.step({"step": 1})
            self.assertEqual(rec.close(), 1)  # lines were rejected
        self.fsck_clean()

    def test_truncated_frame_is_refused(self):
        good = frame(1, 20)
        with Recorder(self.store, init=True, frames=True) as rec:
            rec.initial(FULL, frame_png=good)
            with rec.episode("look") as ep:
                self.rejected(lambda: ep.step({"step": 1}, frame_png=good[:-40]), "not a complete PNG")
                path = os.path.join(self.tmp, "cut.png")
                with open(path, "wb") as f:
                    f.write(good[: len(good) // 2])
                self.rejected(lambda: ep.step({"step": 1}, frame_path=path), "not a complete PNG")
                ep.step({"step": 1}, frame_png=good)
            rec.close()
        self.assertEqual(self.read("episodes/ep_000001/outcome.json")["ticks"], 1)
        self.fsck_clean()

    def test_input_ending_inside_an_episode(self):
        rec = Recorder(self.store, init=True)
        rec.initial(FULL)
        rec.episode("walk").step({"step": 1, "x": 9.5})
        self.assertEqual(rec.close(), 1)
        self.assertIn("input ended inside episode ep_000001 (1 step(s)): it is dropped", rec.stderr)
        now = self.read("now/state.json")
        self.assertEqual(now["step"], 0)
        self.assertEqual(now["pos"]["x"], 0.5)
        self.assertFalse(os.path.exists(os.path.join(self.store, "episodes", "ep_000001")))
        self.fsck_clean()

    def test_lives(self):
        with Recorder(self.store, init=True) as rec:
            rec.initial(FULL)
            with rec.episode("walk") as ep:
                ep.step({"step": 1, "x": 1.5})
            self.assertEqual(rec.new_life(), (2, "previous/life_1"))
            row = rec.initial({"step": 0, "x": 100.5})
            self.assertEqual(row["id"], "ep_000000")
            self.assertEqual(row["life"], 2)
        self.assertTrue(os.path.exists(os.path.join(self.store, "previous/life_1/episodes/ep_000001")))
        self.fsck_clean()

    def test_initial_only_first(self):
        with Recorder(self.store, init=True) as rec:
            rec.initial(FULL)
            self.rejected(lambda: rec.initial(FULL), "the initial episode can only be the first of a life",
                          "life starts a new one")
            rec.close()
        self.fsck_clean()

    def test_smaller_mistakes(self):
        with Recorder(self.store, init=True) as rec:
            rec.initial(FULL)
            # an unparsable line keeps its id
            reply = rec.send_line('{"id": "broken-1", "op": "step", "state": {"step": ')
            self.assertFalse(reply["ok"])
            self.assertEqual(reply["id"], "broken-1")
            # errors name ops
            self.rejected(lambda: rec.request("step", state={"step": 1}), "no episode is open (begin or call opens one)")
            with rec.episode("build") as ep:
                self.rejected(lambda: ep.step({"step": 1}, cells=[{"cell": [0, 64], "kind": "placed"}]),
                              "want [x, y, z], three integers")
                self.rejected(lambda: ep.step({"step": 1}, cells=[{"cell": [0, 64, 1], "kind": "lava_lake"}]),
                              '"lava_lake" is not a kind a harness gives (want placed, opened, blocked or water')
                self.rejected(lambda: ep.step({"step": 0}), "step numbers must increase")
                ep.step({"step": 1}, action={"forward": 1}, cells=[{"cell": [0, 64, 1], "kind": "blocked"}])
                self.rejected(lambda: ep.step({"step": 1}), "step numbers must increase (the previous step was 1)")
            rec.close()
        with open(os.path.join(self.store, "grid.jsonl")) as f:
            grid = f.read()
        self.assertEqual(grid.count('"kind": "blocked"'), 1, grid)
        self.fsck_clean()

    def test_episode_aborts_on_exception(self):
        with Recorder(self.store, init=True) as rec:
            rec.initial(FULL)
            with self.assertRaises(ZeroDivisionError):
                with rec.episode("walk") as ep:
                    ep.step({"step": 1, "x": 5})
                    1 / 0
            with rec.episode("walk") as ep:
                ep.step({"step": 2, "x": 6})
            self.assertEqual(ep.row["id"], "ep_000001")
        self.assertEqual(self.read("episodes/ep_000001/state/state.json")["step"], 0)
        self.fsck_clean()

    def test_end_refused_drops_the_episode(self):
        # an episode without any state cannot be written: the error says so
        # and the episode is dropped, so the next one can begin
        with Recorder(self.store, init=True) as rec:
            with self.assertRaises(RequestRejected) as cm:
                with rec.episode("walk"):
                    pass
            self.assertIn("the episode has no state", cm.exception.error)
            with rec.episode("walk") as ep:
                ep.step({"step": 1, "x": 1})
            self.assertEqual(ep.row["id"], "ep_000000")
            self.assertEqual(rec.close(), 1)
        self.fsck_clean()

    def test_procedure_call(self):
        with Recorder(self.store, init=True) as rec:
            rec.initial(FULL)
            os.makedirs(os.path.join(self.store, "mine", "procedures"))
            with open(os.path.join(self.store, "mine", "procedures", "chop.py"), "w") as f:
                f.write('import json, sys\nargs = json.loads(sys.argv[sys.argv.index("--args") + 1])\n'
                        'if args.get("hits", 1) > 9:\n    raise SystemExit("hits must be 1-9")\n'
                        'print(json.dumps({"actions": [{"action": {"attack": 1}, "repeat": args.get("hits", 1)}]}))\n')
            with rec.call("chop", {"hits": 2}) as c:
                self.assertEqual(c.actions, [{"action": {"attack": 1}, "repeat": 2}])
                c.step({"step": 1, "inventory": {"log": 4}}, item=0, action={"attack": 1})
                c.step({"step": 2}, action={"attack": 1})
            self.assertEqual(c.row["action_kind"], "chop")
            refused = rec.call("chop", {"hits": 50})
            self.assertTrue(refused.refused)
            self.assertEqual(refused.outcome, "refused")
            self.assertIn("hits must be 1-9", refused.error)
        self.assertEqual(self.read("episodes/ep_000001/action.json")["procedure"]["outcome"], "ok")
        self.fsck_clean()

    def test_lock_refusal(self):
        with Recorder(self.store, init=True) as rec:
            rec.initial(FULL)
            other = Recorder(self.store)
            with self.assertRaises(StoreLocked) as cm:
                other.initial(FULL)
            self.assertIn("store is locked by another writer", str(cm.exception))
            self.assertIn("held by pid", cm.exception.stderr)
        self.fsck_clean()

    def test_dead_recorder(self):
        rec = Recorder(self.store, init=True)
        rec.initial(FULL)
        rec._proc.kill()
        with self.assertRaises(RecorderDied) as cm:
            with rec.episode("walk") as ep:
                ep.step({"step": 1})
        self.assertIn("mfmd record is gone", str(cm.exception))
        self.assertEqual(cm.exception.returncode, -9)
        self.fsck_clean()

    def test_timeout(self):
        # a procedure that outlives the client's timeout: the recorder is
        # killed and the error says so
        with Recorder(self.store, init=True) as rec:
            rec.initial(FULL)
        os.makedirs(os.path.join(self.store, "mine", "procedures"))
        with open(os.path.join(self.store, "mine", "procedures", "slow.sh"), "w") as f:
            f.write("#!/bin/sh\ncat >/dev/null\nsleep 5\n")
        rec = Recorder(self.store, timeout=1.0, proc_timeout=60)
        with self.assertRaises(RecorderTimeout):
            rec.call("slow")
        with self.assertRaises(RecorderTimeout):
            rec.request("abort")  # the session is over
        self.fsck_clean()

    def test_many_lines_no_deadlock(self):
        # thousands of requests and replies through the pipes
        with Recorder(self.store, init=True) as rec:
            rec.initial(FULL)
            with rec.episode("walk") as ep:
                for i in range(1, 3001):
                    ep.step({"step": i, "x": 0.5 + i * 0.01})
        self.assertEqual(self.read("episodes/ep_000001/outcome.json")["ticks"], 3000)
        self.fsck_clean()


if __name__ == "__main__":
    unittest.main()
