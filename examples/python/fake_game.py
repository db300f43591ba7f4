#!/usr/bin/env python3
"""A small harness that records a fake game through mfm_record.

A player walks a field, fells trees for logs, bumps into a wall, falls into
a pit (and gets hurt), places dirt, calls a procedure (mine/procedures/
chop.py, installed here), dies once and plays a second life. Every step has
a real 320x180 PNG frame, written with zlib and struct only.

    python3 fake_game.py --store /tmp/st [--episodes 40] [--steps 6] [--mfmd PATH]

It prints one JSON line: episodes recorded, seconds, episodes per second.
"""

import argparse
import json
import math
import os
import struct
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mfm_record import Recorder  # noqa: E402

W, H = 320, 180

CHOP = '''\
"""chop: face the tree, attack until a log drops, pick it up."""
import json, sys
PARAMS = {"hits": "attacks per log, 1-20"}
args = json.loads(sys.argv[sys.argv.index("--args") + 1])
state = json.load(sys.stdin)
hits = int(args.get("hits", 4))
if not 1 <= hits <= 20:
    raise SystemExit("hits must be 1-20")
print(json.dumps({"actions": [
    {"action": {"camera": [0, 15]}, "repeat": 1},
    {"action": {"attack": 1}, "repeat": hits},
]}))
'''


def png(width, height, rows):
    """A truecolour PNG of width x height from rows, each width*3 bytes of
    RGB."""
    raw = b"".join(b"\x00" + bytes(r) for r in rows)  # filter byte 0: none
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b"")


SKY = bytes((110, 160, 230)) * W


def frame(step, health):
    """The game's screen: sky, a sun that moves with the step, ground, a
    health bar."""
    sun = (step * 7) % W
    ground = bytes(v for x in range(W) for v in (60 + (x * 3 + step) % 40, 140, 50))
    rows = []
    for y in range(H):
        row = bytearray(SKY if y < 110 else ground)
        dy = y - 30
        if dy * dy < 144:
            half = int(math.sqrt(144 - dy * dy))
            a, b = max(0, sun - half), min(W, sun + half + 1)
            row[a * 3:b * 3] = bytes((250, 220, 60)) * (b - a)
        if y >= H - 12:
            hp = int(health / 20 * 80)
            row[:hp * 3] = bytes((220, 30, 30)) * hp
        rows.append(row)
    return png(W, H, rows)


class Game:
    """The fake world: a position, health, an inventory, a step counter."""

    def __init__(self):
        self.step = 0
        self.x, self.y, self.z, self.yaw = 0.5, 64.0, 0.5, 0.0
        self.health = 20.0
        self.inventory = {"dirt": 4}
        self.milestones = []

    def state(self):
        return {"step": self.step, "x": round(self.x, 3), "y": self.y, "z": round(self.z, 3),
                "yaw": self.yaw, "pitch": 0, "health": self.health,
                "inventory": dict(self.inventory), "milestones": list(self.milestones)}


def record(store, episodes, steps_per_episode, mfmd=None, frames=True):
    g = Game()
    done = 0
    t0 = time.monotonic()
    with Recorder(store, init=True, frames=frames, task="fake game: wood, a pit, a second life", mfmd=mfmd) as rec:
        rec.initial(g.state(), frame_png=frame(g.step, g.health) if frames else None)
        done += 1
        # the store exists once the initial episode is written: install the
        # procedure the chop episodes call
        procs = os.path.join(store, "mine", "procedures")
        os.makedirs(procs, exist_ok=True)
        with open(os.path.join(procs, "chop.py"), "w") as f:
            f.write(CHOP)
        life_at = episodes * 2 // 3
        for n in range(1, episodes):
            if n == life_at:
                # the player died in the lava at the end of the last episode
                rec.new_life()
                g = Game()
                rec.initial(g.state(), frame_png=frame(g.step, g.health) if frames else None)
                done += 1
                continue
            kind = ("walk", "chop", "wall", "pit", "build")[n % 5]
            if kind == "chop":
                with rec.call("chop", {"hits": 3}) as c:
                    for i, item in enumerate(list(c.actions)):
                        for _ in range(item.get("repeat", 1)):
                            g.step += 1
                            ev = []
                            if "attack" in item.get("action", {}):
                                g.inventory["log"] = g.inventory.get("log", 0) + 1
                                ev = ["mine_block log +1"]
                                if "log_1" not in g.milestones:
                                    g.milestones.append("log_1")
                            c.step(g.state(), item=i, action=item.get("action"), events=ev,
                                   frame_png=frame(g.step, g.health) if frames else None)
                done += 1
                continue
            with rec.episode("go_to" if kind != "build" else "place", {"x": round(g.x + 3, 1), "z": round(g.z, 1)} if kind != "build" else {"item": "dirt"}, budget=steps_per_episode) as ep:
                for s in range(steps_per_episode):
                    g.step += 1
                    cells, events, action = None, None, {"forward": 1}
                    if kind == "walk":
                        g.x += 0.5
                    elif kind == "wall":
                        g.yaw = 0.0  # faces +z: a wall one block ahead
                        cells = [{"cell": [math.floor(g.x), math.floor(g.y), math.floor(g.z) + 1], "kind": "blocked"}] if s == 0 else None
                    elif kind == "pit":
                        g.x += 0.3
                        if s == 1:
                            g.y -= 3
                            g.health = max(0.0, g.health - 3)
                            events = ["hurt fall 3"]
                    elif kind == "build":
                        action = {"use": 1}
                        if s == 0 and g.inventory.get("dirt", 0) > 0:
                            g.inventory["dirt"] -= 1
                            events = ["place_block dirt"]
                            cells = [{"cell": [math.floor(g.x), math.floor(g.y), math.floor(g.z) + 1], "kind": "placed", "item": "dirt"}]
                    state = g.state()
                    if s % 2 == 1:
                        # a harness that sends only what changed: the rest is carried over
                        state = {"step": g.step, "x": state["x"], "y": state["y"], "health": g.health}
                    ep.step(state, action=action, events=events, cells=cells,
                            frame_png=frame(g.step, g.health) if frames else None)
                if kind == "pit":
                    ep.note("fell into a pit, 3 blocks")
            done += 1
    return done, time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", required=True)
    ap.add_argument("--episodes", type=int, default=40)
    ap.add_argument("--steps", type=int, default=6, help="steps per walking episode")
    ap.add_argument("--mfmd", help="the mfmd binary (default $MFMD, else mfmd on PATH)")
    ap.add_argument("--no-frames", action="store_true", help="record without frames")
    a = ap.parse_args()
    n, secs = record(a.store, a.episodes, a.steps, a.mfmd, frames=not a.no_frames)
    print(json.dumps({"episodes": n, "seconds": round(secs, 3), "episodes_per_s": round(n / secs, 1), "frames": not a.no_frames}))


if __name__ == "__main__":
    main()
