#!/usr/bin/env python3
"""The comparison hook for benches: the same work as `fable-hook` in Python 3.

pre-tool-use: read the payload, validate the workspace authority, discover `.fable/` (lstat
checks, stop at .git), check lifecycle paths, parse LEDGER.md, read and validate state.json
(workspaceId = sha256 of the real project path), block a large delegation without an open card.
post-tool-use: the same discovery, then a transaction: exclusive lock file, read state, advance
mutationGeneration, atomic write (temp file, fsync, rename, fsync dir), unlock.
Written as a careful Python hook would be; stdlib only.
"""
import hashlib
import json
import os
import stat
import sys
import time

MARKERS = ("agent", "subagent", "delegate", "delegation", "task", "workflow", "worker")


def regular_or_missing(path):
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(st.st_mode):
        raise OSError("unsafe %s" % path)
    return True


def discover(start):
    cur = os.path.realpath(start)
    while True:
        cand = os.path.join(cur, ".fable")
        try:
            st = os.lstat(cand)
            if stat.S_ISDIR(st.st_mode):
                return cur
            raise OSError("unsafe .fable")
        except FileNotFoundError:
            pass
        if os.path.lexists(os.path.join(cur, ".git")):
            return None
        parent = os.path.dirname(cur)
        if parent == cur:
            return None
        cur = parent


def read_state(root):
    path = os.path.join(root, ".fable", "state.json")
    if not regular_or_missing(path):
        return None
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as fh:
        state = json.loads(fh.read())
    wid = hashlib.sha256(root.encode()).hexdigest()[:24]
    if state.get("schemaVersion") != 3 or state.get("workspaceId") != wid:
        raise ValueError("invalid state")
    for rec in state["evidence"]:
        if rec["result"] not in ("pass", "fail") or not isinstance(rec["generation"], int):
            raise ValueError("invalid evidence")
    return state


def parse_ledger(root):
    path = os.path.join(root, ".fable", "LEDGER.md")
    if not regular_or_missing(path):
        return [], False
    opened, paused = [], False
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "r", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            s = line.strip()
            if s.upper().startswith("PAUSED") and len(s[6:].strip(" :")) >= 3:
                paused = True
            elif s.startswith("- [ ]"):
                opened.append(s[5:].strip())
    return opened, paused


def main():
    event = sys.argv[1]
    try:
        data = json.loads(sys.stdin.read() or "{}")
    except ValueError:
        data = {}
    if not isinstance(data, dict):
        data = {}
    cwd = data.get("cwd")
    if cwd is not None and not (isinstance(cwd, str) and os.path.isabs(cwd) and os.path.isdir(cwd)):
        return 0
    root = discover(cwd or os.getcwd())
    if root is None:
        return 0
    fable = os.path.join(root, ".fable")
    for name in ("state.json", "LEDGER.md", "state.lock"):
        regular_or_missing(os.path.join(fable, name))
    if event == "pre-tool-use":
        name = str(data.get("tool_name", "")).lower()
        tool_input = data.get("tool_input") or {}
        if not any(m in name for m in MARKERS):
            return 0
        size = len("\n".join(v for k, v in tool_input.items() if k in ("prompt", "description") and isinstance(v, str)))
        if size < 1500:
            return 0
        opened, paused = parse_ledger(root)
        if opened or paused:
            return 0
        state = read_state(root)
        sys.stderr.write("[py-hook] BLOCKED large delegation: no open card (phase=%s)\n" % state["phase"])
        return 2
    if event == "post-tool-use":
        lock = os.path.join(fable, "state.lock")
        deadline = time.monotonic() + 1.0
        while True:
            try:
                lfd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o644)
                break
            except FileExistsError:
                if time.monotonic() > deadline:
                    return 0
                time.sleep(0.001)
        try:
            os.write(lfd, b"%d\n" % os.getpid())
            state = read_state(root)
            state["mutationGeneration"] += 1
            state["stateRevision"] += 1
            path = os.path.join(fable, "state.json")
            tmp = os.path.join(fable, ".state.json.tmp-%d" % os.getpid())
            tfd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o644)
            with os.fdopen(tfd, "w") as fh:
                json.dump(state, fh, indent=2)
                fh.write("\n")
                fh.flush()
                os.fsync(fh.fileno())
            os.rename(tmp, path)
            dfd = os.open(fable, os.O_RDONLY)
            os.fsync(dfd)
            os.close(dfd)
        finally:
            os.close(lfd)
            os.unlink(lock)
        return 0
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as exc:  # fail open, like the evaluator
        sys.stderr.write("py-hook error (ignored): %r\n" % exc)
        sys.exit(0)
