"""A client for `mfmd record`, the MFM record protocol (docs/RECORD.md).

Standard library only. One request at a time: every method writes one JSON
line and waits for its reply; the recorder's stdout and stderr are read by
two threads, so neither pipe can fill up and block the recorder.

    from mfm_record import Recorder

    with Recorder("store", init=True, frames=True) as rec:
        rec.initial({"step": 0, "x": 0.5, "y": 64, "z": 0.5, "health": 20}, frame_png=png)
        with rec.episode("go_to", {"x": 3.5, "z": 0.5}, budget=40) as ep:
            ep.step({"step": 1, "x": 1.5}, action={"forward": 1}, frame_png=png)
            ep.note("arrived")
        print(ep.row["summary"])
        with rec.call("dig", {"n": 2}) as c:          # runs mine/procedures/dig
            for i, item in enumerate(c.actions):
                c.step({"step": 2 + i}, item=i)
        rec.new_life()                                 # previous/life_1; next life begins

The binary is `mfmd=` if given, else $MFMD, else `mfmd` on PATH.
Errors are exceptions: RequestRejected (a line the recorder refused: nothing
of it was recorded), StoreLocked (another writer holds the store),
RecorderDied (the process is gone), RecorderTimeout (no reply in time; the
process is killed, since replies can no longer be matched). Each carries the
recorder's stderr.
"""

import base64
import collections
import itertools
import json
import os
import queue
import shutil
import subprocess
import threading

__all__ = [
    "Recorder", "Episode", "ProcedureCall",
    "RecorderError", "RequestRejected", "StoreLocked", "RecorderDied", "RecorderTimeout",
    "find_mfmd",
]


class RecorderError(Exception):
    """Base of the client's errors; stderr is what the recorder printed."""

    def __init__(self, message, stderr=""):
        self.stderr = stderr
        if stderr.strip():
            message = "%s\nmfmd record stderr:\n%s" % (message, stderr.rstrip())
        super().__init__(message)


class RequestRejected(RecorderError):
    """The recorder refused a request ("ok": false). Nothing of it was
    recorded; an open episode stays open. reply is the whole reply,
    error its message ("line N: step: ...")."""

    def __init__(self, reply, stderr=""):
        self.reply = reply
        self.error = reply.get("error", "")
        self.line = reply.get("line")
        super().__init__("mfmd record refused %s: %s" % (reply.get("op") or "a request", self.error), stderr)


class StoreLocked(RecorderError):
    """Another writer (a recorder, mfmd life new, fsck --repair) holds the
    store's writer lock. The recorder finds out as it starts and exits; the
    client raises this from the first request (or close)."""


class RecorderDied(RecorderError):
    """The recorder process is gone (exit status returncode)."""

    def __init__(self, message, returncode=None, stderr=""):
        self.returncode = returncode
        super().__init__(message, stderr)


class RecorderTimeout(RecorderError):
    """No reply within the timeout; the recorder was killed."""


def find_mfmd(mfmd=None):
    """The mfmd binary: mfmd if given, else $MFMD, else mfmd on PATH."""
    path = mfmd or os.environ.get("MFMD") or shutil.which("mfmd")
    if not path:
        raise RecorderError("mfmd not found: pass mfmd=PATH, set $MFMD, or put mfmd on PATH")
    return path


_EOF = object()


class Recorder:
    """A running `mfmd record --store STORE`. Use it from one thread at a
    time: requests and replies strictly alternate.

    store: the store directory. init: create it if it holds no store.
    frames: keep every step's frame and state. task: the initial log
    block's task line. no_reflexes, proc_timeout (seconds: procedures and
    reflexes), frame_dir: the flags of the same names. timeout: seconds to
    wait for each reply (a call runs a procedure: allow for it). mfmd: the
    binary (see find_mfmd). extra_args: more flags for mfmd record.
    """

    def __init__(self, store, *, init=False, frames=False, task=None, no_reflexes=False,
                 proc_timeout=None, frame_dir=None, timeout=30.0, mfmd=None, extra_args=()):
        self.store = store
        self.timeout = timeout
        self.binary = find_mfmd(mfmd)
        args = [self.binary, "record", "--store", store]
        if init:
            args.append("--init")
        if frames:
            args.append("--frames")
        if task is not None:
            args += ["--task", task]
        if no_reflexes:
            args.append("--no-reflexes")
        if proc_timeout is not None:
            args += ["--timeout", "%gs" % proc_timeout]
        if frame_dir is not None:
            args += ["--frame-dir", frame_dir]
        args += list(extra_args)
        try:
            self._proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE)
        except OSError as e:
            raise RecorderError("cannot start %s: %s" % (self.binary, e)) from e
        self._replies = queue.Queue()
        self._stderr = collections.deque(maxlen=200)  # last lines
        self._stderr_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._broken = None  # the error that ended the session, if any
        self.returncode = None
        self._threads = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for t in self._threads:
            t.start()

    # --- the process ---------------------------------------------------

    def _read_stdout(self):
        for line in self._proc.stdout:
            self._replies.put(line)
        self._replies.put(_EOF)

    def _read_stderr(self):
        for line in self._proc.stderr:
            with self._stderr_lock:
                self._stderr.append(line.decode("utf-8", "replace"))

    def _release(self):
        """Waits for the readers to see the end of the pipes and closes them."""
        for t in self._threads:
            t.join(timeout=self.timeout)
        for f in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
            try:
                f.close()
            except OSError:
                pass

    @property
    def stderr(self):
        """What the recorder printed on stderr (the last 200 lines)."""
        with self._stderr_lock:
            return "".join(self._stderr)

    def _gone(self, what):
        """The error for a recorder that is no longer there."""
        try:
            code = self._proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            code = None
        self._release()
        err = self.stderr
        if "locked by another writer" in err:
            e = StoreLocked("the store %s is locked by another writer" % self.store, err)
        else:
            e = RecorderDied("mfmd record is gone (%s; exit status %s)" % (what, code), code, err)
        self._broken = e
        self.returncode = code
        return e

    def _send(self, line):
        """Writes one line and returns its reply (a dict)."""
        if self._broken is not None:
            raise self._broken
        try:
            self._proc.stdin.write(line)
            self._proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            raise self._gone("writing a request") from None
        try:
            got = self._replies.get(timeout=self.timeout)
        except queue.Empty:
            self._proc.kill()
            self._gone("killed")
            self._broken = RecorderTimeout("no reply from mfmd record within %gs; it was killed" % self.timeout, self.stderr)
            raise self._broken from None
        if got is _EOF:
            raise self._gone("no reply")
        try:
            return json.loads(got)
        except ValueError:
            self._broken = RecorderError("mfmd record replied with a line that is not JSON: %r" % got[:200], self.stderr)
            raise self._broken from None

    def request(self, op, **fields):
        """Sends {"op": op, **fields} with a fresh id and returns the reply.
        Fields whose value is None are left out. Raises RequestRejected for
        "ok": false."""
        rid = "r%d" % next(self._ids)
        req = {"op": op, "id": rid}
        req.update((k, v) for k, v in fields.items() if v is not None)
        reply = self._send((json.dumps(req, separators=(",", ":")) + "\n").encode())
        if reply.get("id") != rid:
            self._broken = RecorderError("reply id %r does not match request id %r: %r" % (reply.get("id"), rid, reply), self.stderr)
            raise self._broken
        if not reply.get("ok"):
            raise RequestRejected(reply, self.stderr)
        return reply

    def send_line(self, line):
        """Sends one raw line (bytes or str, without the newline) and returns
        the reply without checking it: for tests of the protocol itself."""
        if isinstance(line, str):
            line = line.encode()
        return self._send(line + b"\n")

    # --- the ops -------------------------------------------------------

    def initial(self, state, *, frame_png=None, frame_path=None):
        """Records the initial episode (the life's first, or refused);
        returns its index row."""
        return self.request("initial", state=state, **_frame(frame_png, frame_path))["row"]

    def episode(self, kind=None, args=None, *, raw=None, budget=None, plan=None, header=None, meta=None):
        """Opens an episode doing kind(args), or the low-level action raw:
        a context manager that ends it on leaving, or aborts it when an
        exception leaves the block."""
        call = _call(kind, args, raw, budget, plan, header, meta)
        reply = self.request("begin", call=call)
        return Episode(self, reply["episode"])

    def call(self, kind, args=None, *, budget=None, plan=None, header=None, meta=None):
        """Runs the procedure mine/procedures/KIND on the latest state and
        opens its episode: a context manager (see ProcedureCall). A
        procedure that refuses is recorded at once: refused is True, row
        its row, error the reason, and no episode is open."""
        call = _call(kind, args, None, budget, plan, header, meta)
        reply = self.request("call", call=call)
        return ProcedureCall(self, reply)

    def new_life(self):
        """Ends the current life (to previous/life_N; mine/ stays) and
        starts the next. Returns (life, previous)."""
        reply = self.request("life")
        return reply["life"], reply["previous"]

    # --- the end -------------------------------------------------------

    def close(self):
        """Ends the input and waits for the recorder. Returns its exit status:
        0, or 1 if it rejected a line or the input ended inside an episode
        (which it drops). A lock refusal raises StoreLocked."""
        if self.returncode is not None:
            return self.returncode
        try:
            self._proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        try:
            code = self._proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            code = self._proc.wait()
        self._release()
        self.returncode = code
        if code not in (0, 1) or (code == 1 and "locked by another writer" in self.stderr):
            e = self._gone("exit")
            raise e
        return code

    def kill(self):
        """Kills the recorder (as a crash would)."""
        self._proc.kill()
        self.close_quietly()

    def close_quietly(self):
        try:
            return self.close()
        except RecorderError:
            return self.returncode

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            self.close_quietly()
        return False


class Episode:
    """An open episode (Recorder.episode). step, note; leaving the block
    ends it (row then holds the index row) or, on an exception, aborts it."""

    def __init__(self, rec, episode_id):
        self.rec = rec
        self.id = episode_id
        self.row = None
        self.closed = False

    def step(self, state, *, action=None, events=None, cells=None, frame_png=None, frame_path=None, **more):
        """Adds a step. state needs "step" (strictly increasing); a field
        left out keeps its latest value. cells: [{"cell": [x, y, z],
        "kind": "placed"|"opened"|"blocked"|"water", "item": ...}]."""
        return self.rec.request("step", state=state, action=action, events=events, cells=cells,
                                **_frame(frame_png, frame_path), **more)

    def note(self, text):
        return self.rec.request("note", text=text)

    def end(self, **fields):
        """Writes the episode; returns its index row."""
        self.row = self.rec.request("end", **fields)["row"]
        self.closed = True
        return self.row

    def abort(self):
        """Drops the episode (nothing of it is recorded)."""
        self.closed = True
        self.rec.request("abort")

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if self.closed:
            return False
        if exc_type is None:
            try:
                self.end()
            except RequestRejected:
                # not written (an episode without any state, say): drop it so
                # the next episode can begin, and say why
                try:
                    self.rec.request("abort")
                except RecorderError:
                    pass
                raise
        elif not isinstance(exc, (RecorderDied, RecorderTimeout, StoreLocked)):
            try:
                self.abort()
            except RecorderError:
                pass
        return False


class ProcedureCall(Episode):
    """A procedure call's episode (Recorder.call). actions is the plan to
    execute; send each item's steps with item=i. A step's reply may change
    the plan (actions is then the new one) or say stop: execute the
    reflexes' actions after the item and end. end(outcome=, error=, done=)
    closes it; leaving the block ends it with the defaults."""

    def __init__(self, rec, reply):
        super().__init__(rec, reply.get("episode"))
        self.actions = reply.get("actions", [])
        self.outcome = reply.get("outcome")
        self.error = reply.get("error")
        self.refused = "row" in reply
        self.stopped = False
        if self.refused:
            self.row = reply["row"]
            self.closed = True

    def step(self, state, *, item=None, **kw):
        if self.refused:
            raise RecorderError("the call was refused (%s): it has no episode to add steps to" % self.outcome)
        reply = super().step(state, item=item, **kw)
        if "actions" in reply:
            self.actions = reply["actions"]
        if reply.get("stop"):
            self.stopped = True
        return reply

    def end(self, outcome=None, error=None, done=None):
        return super().end(outcome=outcome, error=error, done=done)


def _frame(frame_png, frame_path):
    if frame_png is not None and frame_path is not None:
        raise ValueError("give frame_png or frame_path, not both")
    if frame_png is not None:
        return {"frame_png_b64": base64.b64encode(frame_png).decode("ascii")}
    if frame_path is not None:
        # relative to this process's working directory, as Python resolves it
        return {"frame_path": os.path.abspath(frame_path)}
    return {}


def _call(kind, args, raw, budget, plan, header, meta):
    call = {}
    if kind is not None:
        call["kind"] = kind
    if args is not None:
        call["args"] = args
    if raw is not None:
        call["raw"] = raw
    for k, v in (("budget", budget), ("plan", plan), ("header", header), ("meta", meta)):
        if v is not None:
            call[k] = v
    return call
