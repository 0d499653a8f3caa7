#!/usr/bin/env python3
"""Crash, concurrency, hostile-input, evaluator and disk-full experiments against the `fable`
binary (docs/reliability.md).

    python3 tests/reliability/run.py            # fast subset (CI): 30 kills, 4 processes, ~4 s
    python3 tests/reliability/run.py --full     # 300 kills, 16 processes, 500+ edits, 150 apply kills
    python3 tests/reliability/run.py --only crash|concurrency|hostile|evaluator|diskfull|reconcile

FABLE_BIN names the binary (default target/debug/fable). Exit 0 when every invariant held; each
violation is printed. Everything runs in a temp directory; nothing outside it is touched.
"""

import argparse
import json
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("FABLE_BIN") or os.path.join(ROOT, "target", "debug", "fable")
TEMP_MARK = ".fable-tmp-"
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg, flush=True)


class Sandbox:
    """A temp HOME and FABLE_HOME; `run` executes fable there."""

    def __init__(self, home_name="home"):
        self.tmp = tempfile.mkdtemp(prefix="fable-rel-")
        self.home = os.path.join(self.tmp, home_name)
        self.fable_home = os.path.join(self.home, ".fable")
        os.makedirs(self.home)

    def env(self):
        return {
            "PATH": "/usr/bin:/bin",
            "HOME": self.home,
            "FABLE_HOME": self.fable_home,
            "LANG": "C",
            "NO_COLOR": "1",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.path.join(self.tmp, "gitconfig"),
        }

    def popen(self, *args):
        return subprocess.Popen([BIN, *args], env=self.env(), cwd=self.home,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)

    def run(self, *args, timeout=60):
        p = subprocess.run([BIN, *args], env=self.env(), cwd=self.home, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=timeout)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")

    def close(self):
        subprocess.run(["chmod", "-R", "u+w", self.tmp], capture_output=True)
        shutil.rmtree(self.tmp, ignore_errors=True)


def write(path, text, mode=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    if mode is not None:
        os.chmod(path, mode)


def make_source(path, version, files=300):
    """A plugin source of `files` files; `version` changes the manifest and ten files."""
    hooks = {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 \"${CLAUDE_PLUGIN_ROOT}/hooks/guard.py\" pre", "timeout": 10}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "python3 \"${CLAUDE_PLUGIN_ROOT}/hooks/guard.py\" stop", "timeout": 5}]}],
    }
    if version == "B":
        hooks["PostToolUse"] = [{"matcher": "Edit", "hooks": [{"type": "command", "command": "python3 \"${CLAUDE_PLUGIN_ROOT}/hooks/guard.py\" post", "timeout": 7}]}]
        del hooks["Stop"]
    expected = {"hooks/hooks.json": json.dumps({"hooks": hooks}, indent=2) + "\n",
                "hooks/guard.py": "import sys\nsys.exit(0)\n"}
    for i in range(files - 2):
        body = f"# helper {i}\n" + (f"# version {version}\n" if i < 10 else "")
        expected[f"hooks/lib/mod_{i}.py"] = body
    for rel, text in expected.items():
        p = os.path.join(path, rel)
        try:
            with open(p) as f:
                if f.read() == text:
                    continue
        except OSError:
            pass
        write(p, text)
    return expected


def settings_files(sb):
    return {
        "claude": os.path.join(sb.home, ".claude", "settings.json"),
        "codex": os.path.join(sb.home, ".codex", "hooks.json"),
        "gemini": os.path.join(sb.home, ".gemini", "settings.json"),
        "cursor": os.path.join(sb.home, ".cursor", "hooks.json"),
    }


def seed_profiles(sb):
    """Four hosts; Claude's file a symlink (0640 target) with odd formatting and foreign hooks."""
    target = os.path.join(sb.home, "dotfiles", "claude.json")
    write(target, '{\n\t"model": "sonnet",   "n": 1e3,\n\t"hooks": {\n\t\t"Stop": [{"hooks": [{"type": "command", "command": "echo foreign-stop"}]}]\n\t}\n}\n', 0o640)
    os.makedirs(os.path.join(sb.home, ".claude"))
    os.symlink(target, settings_files(sb)["claude"])
    write(settings_files(sb)["codex"], '{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo foreign-codex"}]}]}}')
    write(settings_files(sb)["gemini"], '{\n  "theme": "x",\n  "hooks": {\n    "BeforeTool": [\n      {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "echo foreign-gemini"}]}\n    ]\n  }\n}\n')
    write(settings_files(sb)["cursor"], '{"version": 1, "hooks": {"stop": [{"command": "echo foreign-cursor"}]}}\n')
    return target


def snapshot(sb):
    out = {}
    for host, p in settings_files(sb).items():
        with open(p, "rb") as f:
            out[host] = f.read()
    return out


def temps_beside_settings(sb):
    found = []
    for p in settings_files(sb).values():
        for d in {os.path.dirname(p), os.path.dirname(os.path.realpath(p))}:
            found += [os.path.join(d, n) for n in os.listdir(d) if TEMP_MARK in n]
    return found


def age_fable_temps(sb):
    """Makes fable's temp files look two minutes old (the doctor spares younger ones)."""
    dirs = set()
    for p in settings_files(sb).values():
        dirs |= {os.path.dirname(p), os.path.dirname(os.path.realpath(p))}
    for base, _, names in os.walk(sb.fable_home):
        if "/gen/" not in base + "/":
            dirs.add(base)
    past = time.time() - 120
    for d in dirs:
        for n in os.listdir(d) if os.path.isdir(d) else []:
            if TEMP_MARK in n:
                try:
                    os.utime(os.path.join(d, n), (past, past), follow_symlinks=False)
                except OSError:
                    pass


MARKER = ".fable-generation"


def mirror_files(cur):
    """The files of a `current` mirror by relative path (its marker left out), or None when
    `current` is not a real directory naming an existing generation, or has a symlink in it."""
    if os.path.islink(cur) or not os.path.isdir(cur):
        return None
    try:
        with open(os.path.join(cur, MARKER)) as f:
            gen = os.path.join(os.path.dirname(cur), "gen", f.read().strip())
    except OSError:
        return None
    if not os.path.isdir(gen):
        return None
    got = {}
    for base, dirs, names in os.walk(cur):
        for n in dirs + names:
            if os.path.islink(os.path.join(base, n)):
                return None
        for n in names:
            p = os.path.join(base, n)
            rel = os.path.relpath(p, cur)
            if rel == MARKER:
                continue
            with open(p) as f:
                got[rel] = f.read()
    return got


def check_current(sb, versions):
    """`current` is a complete mirror of a generation of one version; returns that version."""
    srcs = os.path.join(sb.fable_home, "sources")
    keys = [k for k in os.listdir(srcs) if k != "default" and os.path.isdir(os.path.join(srcs, k))]
    cur = os.path.join(srcs, keys[0], "current")
    got = mirror_files(cur)
    if got is None:
        fail(f"{cur} is not a directory mirroring a generation (no marker, a link in it, or missing)")
        return None
    for name, exp in versions.items():
        if got == exp:
            return name
    fail(f"{cur} is not a complete generation ({len(got)} files)")
    return None


def crash(kills, seed):
    rng = random.Random(seed)
    sb = Sandbox()
    try:
        src = os.path.join(sb.tmp, "plugin")
        target = seed_profiles(sb)
        versions = {"A": make_source(src, "A"), "B": make_source(src, "B")}
        original = snapshot(sb)
        allowed = {h: {b} for h, b in original.items()}
        state_of = {}
        durations = []
        for v in ["A", "B", "A", "B"]:
            make_source(src, v)
            t = time.time()
            code, _, err = sb.run("install", src)
            durations.append(time.time() - t)
            if code != 0:
                fail(f"clean install {v} exited {code}: {err}")
                return
            snap = snapshot(sb)
            state_of.setdefault(v, snap)
            for h, b in snap.items():
                allowed[h].add(b)
        for h, s in allowed.items():
            if len(s) != 3:
                print(f"note: {h} has {len(s)} distinct valid states (expected 3)")
        # Kill within the time an alternating install takes (the first one also hashes cold).
        window = sorted(durations[1:])[1] * 1.1
        killed_mid = 0
        for i in range(1, kills + 1):
            v = "A" if i % 2 else "B"
            make_source(src, v)
            p = sb.popen("install", src)
            time.sleep(rng.uniform(0, window))
            # Adapt the window so that most kills land while the install runs.
            if p.poll() is None:
                killed_mid += 1
                window *= 1.05
            else:
                window *= 0.8
            p.send_signal(signal.SIGKILL)
            p.wait()
            for h, path in settings_files(sb).items():
                with open(path, "rb") as f:
                    b = f.read()
                try:
                    json.loads(b)
                except ValueError:
                    fail(f"kill {i}: {path} does not parse")
                if b not in allowed[h]:
                    fail(f"kill {i}: {path} is none of original/A/B")
            link = settings_files(sb)["claude"]
            if not os.path.islink(link) or stat.S_IMODE(os.stat(target).st_mode) != 0o640:
                fail(f"kill {i}: {link} lost its link or mode")
            check_current(sb, versions)
            if i % 10 == 0 or i == kills:
                age_fable_temps(sb)
                code, out, err = sb.run("doctor", "--no-probe", "--fix")
                left = temps_beside_settings(sb)
                if left:
                    fail(f"kill {i}: temp files left after doctor --fix: {left}")
                cur = check_current(sb, versions)
                if cur != v:
                    fail(f"kill {i}: after doctor --fix current is {cur}, source is {v}")
                if snapshot(sb) != state_of[v]:
                    fail(f"kill {i}: after doctor --fix the profiles are not the {v} state")
                code, out, _ = sb.run("status", src, "--json")
                state = json.loads(out)["sources"][0]["state"] if code == 0 else f"exit {code}"
                if state != "current":
                    fail(f"kill {i}: status after doctor --fix is {state}")
                journals = os.listdir(os.path.join(sb.fable_home, "journal"))
                if journals:
                    fail(f"kill {i}: journals left after doctor --fix: {journals}")
        print(f"crash: {kills} kills ({killed_mid} while the install ran, final window {window*1000:.0f} ms), "
              f"checked after each; doctor --fix every 10th")
    finally:
        sb.close()


def small_source(path, n):
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": f"python3 \"${{CLAUDE_PLUGIN_ROOT}}/hooks/s{n}.py\"", "timeout": 10}]}]}
    write(os.path.join(path, "hooks", "hooks.json"), json.dumps({"hooks": hooks}))
    write(os.path.join(path, "hooks", f"s{n}.py"), "import sys\nsys.exit(0)\n")


def concurrency(procs, seconds, edits):
    sb = Sandbox()
    try:
        srcs = []
        for n in range(4):
            d = os.path.join(sb.tmp, f"src{n}")
            small_source(d, n)
            srcs.append(d)
        settings = settings_files(sb)["claude"]
        write(settings, '{\n  "model": "opus"\n}\n')
        added = []
        exits = {}
        bad = []
        doctor_errors = []
        gave_up = []
        lock = threading.Lock()
        stop = threading.Event()

        def editor():
            n = 0
            while not stop.is_set() and n < edits:
                with open(settings) as f:
                    text = f.read()
                try:
                    v = json.loads(text)
                except ValueError:
                    bad.append(text)
                    continue
                groups = v.setdefault("hooks", {}).setdefault("UserPromptSubmit", [])
                groups.append({"hooks": [{"type": "command", "command": f"echo user-{n}"}]})
                tmp = settings + ".editor-tmp"
                with open(tmp, "w") as f:
                    f.write(json.dumps(v, indent=2))
                os.rename(tmp, settings)
                added.append(f"echo user-{n}")
                n += 1
                time.sleep(seconds / max(edits, 1) * 0.5)

        def worker(seed):
            rng = random.Random(seed)
            while not stop.is_set():
                op = rng.choice(["install", "install", "uninstall", "status", "doctor"])
                args = {"install": ["install", rng.choice(srcs)],
                        "uninstall": ["uninstall", rng.choice(srcs)],
                        "status": ["status"],
                        "doctor": ["doctor", "--no-probe"]}[op]
                code, out, err = sb.run(*args, timeout=120)
                with lock:
                    if op == "doctor" and code != 0:
                        errors = [l.strip() for l in out.splitlines() if "[error]" in l]
                        doctor_errors.extend(errors[:3])
                    exits.setdefault(op, {}).setdefault(code, 0)
                    exits[op][code] += 1
                    if code == 1 and "times in a row; nothing of fable's was written" in err:
                        gave_up.append(op)  # the documented give-up on a file that never rests
                    elif code != 0 and op != "doctor":
                        bad.append(f"{' '.join(args)} exited {code}: {err.strip()[:300]}")

        ed = threading.Thread(target=editor)
        ws = [threading.Thread(target=worker, args=(s,)) for s in range(procs)]
        ed.start()
        for w in ws:
            w.start()
        time.sleep(seconds)
        ed.join(timeout=seconds * 4)
        stop.set()
        for w in ws:
            w.join()
        ed.join()
        with open(settings) as f:
            final = json.load(f)
        cmds = [h["command"] for gs in final.get("hooks", {}).values() for g in gs for h in g["hooks"]]
        lost = [c for c in added if c not in cmds]
        owned = [c for c in cmds if "/.fable/sources/" in c]
        dups = sorted({c for c in owned if owned.count(c) > 1})
        if lost:
            fail(f"concurrency: {len(lost)} of {len(added)} user entries lost")
        if dups:
            fail(f"concurrency: duplicated owned entries: {dups}")
        for b in bad:
            fail(f"concurrency: {b}")
        for p in settings_files(sb).values():
            if os.path.exists(p):
                with open(p) as f:
                    json.load(f)
        ops = sum(sum(c.values()) for c in exits.values())
        kinds = sorted({e.split("]")[1].split(":")[0].strip()[:60] for e in doctor_errors if "]" in e})
        if kinds:
            print(f"concurrency: doctor (read-only, racing the writers) reported: {kinds[:6]}")
        print(f"concurrency: {procs} processes, {ops} operations {exits}, {len(added)} user edits, "
              f"{len(lost)} lost, {len(dups)} duplicated, {len(gave_up)} gave up (file never quiet)")
    finally:
        sb.close()


HOSTILE_NAMES = ["sp ace", "quo'te", 'dq"uote', "$(touch MARKER)", "back`touch MARKER`tick", "new\nline", "semi;colon&"]


def hostile():
    cases = 0
    for name in HOSTILE_NAMES:
        for where in ["home", "source"]:
            sb = Sandbox(home_name=name if where == "home" else "home")
            try:
                src = os.path.join(sb.tmp, name if where == "source" else "plugin")
                hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [
                    {"type": "command", "command": "python3 \"${CLAUDE_PLUGIN_ROOT}/hooks/r.py\" dq"},
                    {"type": "command", "command": "python3 ${CLAUDE_PLUGIN_ROOT}/hooks/r.py bare"},
                    {"type": "command", "command": "python3 '${CLAUDE_PLUGIN_ROOT}/hooks/r.py' sq"},
                    {"type": "command", "command": "python3 \"`echo \"${CLAUDE_PLUGIN_ROOT}/hooks/r.py\"`\" bt"},
                ]}]}
                write(os.path.join(src, "hooks", "hooks.json"), json.dumps({"hooks": hooks}))
                ran = os.path.join(sb.tmp, "ran")
                write(os.path.join(src, "hooks", "r.py"), f"import sys\nopen({ran!r}, 'a').write(sys.argv[1] + '\\n')\n")
                code, _, err = sb.run("install", src)
                cases += 1
                if code != 0:
                    fail(f"hostile {where} {name!r}: install exited {code}: {err}")
                    continue
                with open(os.path.join(sb.home, ".claude", "settings.json")) as f:
                    v = json.load(f)
                for g in v["hooks"]["PreToolUse"]:
                    for h in g["hooks"]:
                        p = subprocess.run(["sh", "-c", h["command"]], input=b"{}", cwd=sb.tmp,
                                           capture_output=True, env={"PATH": "/usr/bin:/bin", "HOME": sb.home})
                        if p.returncode != 0:
                            fail(f"hostile {where} {name!r}: {h['command']!r} exited {p.returncode}: {p.stderr[:200]!r}")
                try:
                    with open(ran) as f:
                        got = sorted(f.read().split())
                except OSError:
                    got = []
                if got != ["bare", "bt", "dq", "sq"]:
                    fail(f"hostile {where} {name!r}: hooks that ran: {got}")
                for base, dirs, names in os.walk(sb.tmp):
                    if "MARKER" in names:
                        fail(f"hostile {where} {name!r}: MARKER created in {base}")
            finally:
                sb.close()
    # Special files and a read-only file as settings: refused, naming the file, promptly.
    for kind in ["fifo", "fifo-link", "directory", "read-only"]:
        sb = Sandbox()
        try:
            src = os.path.join(sb.tmp, "plugin")
            small_source(src, 0)
            path = os.path.join(sb.home, ".claude", "settings.json")
            os.makedirs(os.path.dirname(path))
            if kind == "fifo":
                os.mkfifo(path)
            elif kind == "fifo-link":
                os.mkfifo(os.path.join(sb.tmp, "pipe"))
                os.symlink(os.path.join(sb.tmp, "pipe"), path)
            elif kind == "directory":
                os.mkdir(path)
            else:
                write(path, "{}\n", 0o444)
            # A read-only file is fine to read: only the install (which would change it) refuses.
            runs = [("install", src)] + ([] if kind == "read-only" else [("doctor", "--no-probe")])
            for args in runs:
                cases += 1
                try:
                    code, out, err = sb.run(*args, timeout=20)
                except subprocess.TimeoutExpired:
                    fail(f"hostile {kind}: {args[0]} hangs")
                    continue
                if code == 0 or path not in out + err:
                    fail(f"hostile {kind}: {args[0]} exited {code} without naming {path}: {err or out}")
            if kind == "read-only":
                with open(path) as f:
                    if f.read() != "{}\n":
                        fail("hostile read-only: the file was changed")
        finally:
            sb.close()
    print(f"hostile: {cases} cases ({len(HOSTILE_NAMES)} names x HOME/source, 4 quoting forms each, "
          f"4 special settings files x install (and doctor, but for the read-only one))")


def evaluator(procs, per_proc, kills, seed):
    """PostToolUse mutation records under load and under SIGKILL (docs/design.md, "Durability of
    the evaluator's records"): `procs` concurrent hook processes, `per_proc` each, must advance
    the generation exactly once per process (folded debt included); then hooks killed at random
    instants must never leave state.json torn, and never lose a record that was written."""
    rng = random.Random(seed)
    sb = Sandbox()
    try:
        proj = os.path.join(sb.tmp, "project")
        os.makedirs(proj)
        code, _, err = sb.run("init", "--dir", proj)
        state_path = os.path.join(proj, ".fable", "state.json")
        if not os.path.exists(state_path):
            fail(f"evaluator: fable init made no state ({err.strip()[:200]})")
            return
        payload = json.dumps({"session_id": "s", "cwd": proj, "hook_event_name": "PostToolUse",
                              "tool_name": "Write", "tool_input": {"file_path": os.path.join(proj, "a.txt"), "content": "x"},
                              "tool_response": {"success": True}}).encode()

        def hook():
            return subprocess.Popen([BIN, "hook", "post-tool-use"], env=sb.env(), cwd=proj,
                                    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

        def generation():
            with open(state_path) as f:
                s = json.load(f)
            pending = os.path.join(proj, ".fable", "pending-mutations")
            tokens = len(os.listdir(pending)) if os.path.isdir(pending) else 0
            return s["mutationGeneration"], tokens

        g0, _ = generation()
        bad = []

        def worker():
            for _ in range(per_proc):
                p = hook()
                _, e = p.communicate(payload, timeout=60)
                if p.returncode != 0:
                    bad.append(f"exit {p.returncode}: {e.decode(errors='replace')[:200]}")

        ws = [threading.Thread(target=worker) for _ in range(procs)]
        for w in ws:
            w.start()
        for w in ws:
            w.join()
        for b in bad:
            fail(f"evaluator: a post-tool-use {b}")
        g1, tokens = generation()
        if g1 + tokens - g0 != procs * per_proc:
            fail(f"evaluator: {procs * per_proc} mutations recorded as {g1 - g0} + {tokens} pending")
        # Kills at random instants: the state stays whole, and what was recorded stays.
        torn = 0
        window = 0.004
        for i in range(kills):
            before, before_tokens = generation()
            p = hook()
            p.stdin.write(payload)
            p.stdin.close()
            time.sleep(rng.uniform(0, window))
            p.kill()
            p.wait()
            try:
                after, after_tokens = generation()
            except (ValueError, KeyError, OSError) as e:
                torn += 1
                fail(f"evaluator: kill {i}: state.json unreadable after the kill: {e}")
                continue
            moved = (after + after_tokens) - (before + before_tokens)
            if moved not in (0, 1):
                fail(f"evaluator: kill {i}: the generation moved by {moved}")
        p = hook()
        p.communicate(payload, timeout=60)
        left = [n for n in os.listdir(os.path.join(proj, ".fable")) if ".tmp-" in n]
        print(f"evaluator: {procs} concurrent processes x {per_proc} post-tool-use: generation +{g1 - g0} "
              f"and {tokens} pending (expected {procs * per_proc}); {kills} kills mid-hook, {torn} torn states; "
              f"{len(left)} temp files left for the next transaction's sweep")
    finally:
        sb.close()


def free_bytes(path):
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def fill(mnt, leave):
    """Fills the file system at `mnt` until `leave` bytes are free (tmpfs counts pages)."""
    filler = os.path.join(mnt, "filler")
    want = max(free_bytes(mnt) - leave, 0)
    with open(filler, "wb") as f:
        chunk = b"\0" * (1 << 20)
        while want > 0:
            try:
                f.write(chunk[:min(want, len(chunk))])
                f.flush()
            except OSError:
                break
            want -= min(want, len(chunk))
    return filler


def tree_state(root):
    """Every path under `root` with its bytes (files) or link target: the whole state."""
    out = {}
    for base, dirs, names in os.walk(root):
        for n in dirs + names:
            p = os.path.join(base, n)
            if os.path.islink(p):
                out[p] = ("link", os.readlink(p))
            elif os.path.isfile(p):
                with open(p, "rb") as f:
                    out[p] = ("file", f.read())
            else:
                out[p] = ("dir",)
    return out


def diskfull_child(tmp, full):
    """Runs inside `unshare -rm`: FABLE_HOME and ~/.claude on a small tmpfs, filled up."""
    mnt = os.path.join(tmp, "mnt")
    os.makedirs(mnt)
    size = 6 << 20
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", mnt],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print(f"diskfull: skipped: cannot mount a tmpfs here ({r.stderr.strip()})")
        return
    src = os.path.join(tmp, "plugin")
    versions = {"A": make_source(src, "A"), "B": make_source(src, "B")}
    home = os.path.join(mnt, "home")
    env = {"PATH": "/usr/bin:/bin", "HOME": home, "FABLE_HOME": os.path.join(home, ".fable"),
           "LANG": "C", "NO_COLOR": "1", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": os.path.join(tmp, "gitconfig")}

    def fable(*args):
        p = subprocess.run([BIN, *args], env=env, cwd=tmp, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=60)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")

    settings = os.path.join(home, ".claude", "settings.json")
    cases = failed_cleanly = 0
    example = ""
    where = set()
    def need(start):
        """Bytes a whole install takes on the tmpfs from this starting point."""
        subprocess.run(["rm", "-rf", home])
        write(settings, "{}\n")
        make_source(src, "A")
        if start == "update":
            fable("install", src)
            make_source(src, "B")
        before = free_bytes(mnt)
        fable("install", src)
        return before - free_bytes(mnt)

    levels = 60 if full else 12
    for start in ["fresh", "update"]:
        # Free space left by the filler, from nothing to what the whole install takes (in
        # pages), so that the failure lands in every step: journal, generation, record,
        # backups, settings.
        total = need(start)
        leaves = {(total * k // levels) // 4096 * 4096 for k in range(levels + 1)}
        # Page by page near the end, where the record, the tree cache, the backups and the
        # settings file are written after the generation.
        leaves |= {max(total // 4096 * 4096 - k * 4096, 0) for k in range(-1, 24 if full else 12)}
        leaves = sorted(leaves)
        for leave in leaves:
            subprocess.run(["rm", "-rf", home])
            write(settings, '{\n  "model": "opus",\n  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]}\n}\n')
            make_source(src, "A")
            if start == "update":
                code, _, err = fable("install", src)
                if code != 0:
                    fail(f"diskfull: baseline install exited {code}: {err}")
                    return
                make_source(src, "B")
            before = tree_state(home)
            filler = fill(mnt, leave)
            code, out, err = fable("install", src)
            cases += 1
            after = tree_state(home)
            after.pop(filler, None)
            temps = [p for p in after if TEMP_MARK in os.path.basename(p) or "/gen/.tmp-" in p
                     or os.path.basename(p).startswith(".tmp-")]
            if temps:
                fail(f"diskfull {start} leave={leave}: temp files left: {temps[:5]}")
            if code == 0:
                # Enough room after all: it must be a whole, correct install.
                os.remove(filler)
                want = "B" if start == "update" else "A"
                if check_current_at(env["FABLE_HOME"], versions) != want:
                    fail(f"diskfull {start} leave={leave}: exit 0 but current is not {want}")
            else:
                failed_cleanly += 1
                step = err.strip().splitlines()[-1] if err.strip() else ""
                where.add("/gen/" in step and "generation" or "source.json" in step and "record"
                          or "tree-cache" in step and "tree cache" or "journal" in step and "journal"
                          or "backups" in step and "backups" or "settings" in step and "settings" or "other")
                if "No space left on device" not in err or mnt not in err:
                    fail(f"diskfull {start} leave={leave}: exit {code} without a no-space error naming a path: {err.strip()[:300]}")
                # Every file the user and earlier installs made is as it was.
                for p, v in before.items():
                    # The tree cache only describes the live tree (it is checked against the disk).
                    if after.get(p) != v and "/journal/" not in p and not p.endswith("/tree-cache"):
                        fail(f"diskfull {start} leave={leave}: {p} changed")
                        break
                new = [p for p in after if p not in before and "/journal" not in p
                       and "/backups" not in p and not os.path.isdir(p)]
                # New files are only ever complete ones (a generation is renamed in whole).
                for p in new:
                    if "/gen/" in p:
                        gen = p.split("/gen/")[1].split("/")[0]
                        if not gen.startswith(".") and not os.path.exists(os.path.join(p.split("/gen/")[0], "gen", gen, "hooks", "hooks.json")):
                            fail(f"diskfull {start} leave={leave}: partial generation {gen}")
                            break
                os.remove(filler)
            if leave == leaves[len(leaves) // 2] and start == "update":
                example = err.strip().splitlines()[-1] if err.strip() else ""
            # With room again, the doctor's repair converges (it finishes a failed install's
            # journal), and the install after it is a no-op.
            code, out, err = fable("doctor", "--no-probe", "--fix")
            code, out, err = fable("install", src)
            if code != 0:
                fail(f"diskfull {start} leave={leave}: install after freeing space exited {code}: {err.strip()[:300]}")
                continue
            code, out, _ = fable("status", src, "--json")
            state = json.loads(out)["sources"][0]["state"] if code == 0 else f"exit {code}"
            if state != "current":
                fail(f"diskfull {start} leave={leave}: status after freeing space is {state}")
            journals = os.listdir(os.path.join(env["FABLE_HOME"], "journal"))
            if journals:
                fail(f"diskfull {start} leave={leave}: journals left after doctor --fix and an install: {journals}")
    subprocess.run(["umount", mnt])
    print(f"diskfull: e.g. {example}")
    print(f"diskfull: {cases} installs on a full 6 MiB tmpfs (FABLE_HOME and ~/.claude; fresh and update, "
          f"free space from 0 to what the install takes in {levels} steps), {failed_cleanly} failed cleanly, "
          f"the rest had room and completed; failures hit: {', '.join(sorted(where))}")


def check_current_at(fable_home, versions):
    srcs = os.path.join(fable_home, "sources")
    for k in os.listdir(srcs):
        if k == "default":
            continue
        got = mirror_files(os.path.join(srcs, k, "current"))
        for name, exp in versions.items():
            if got == exp:
                return name
    return None


def diskfull(full):
    """Runs the disk-full experiment in a user + mount namespace (skipped where not allowed)."""
    tmp = tempfile.mkdtemp(prefix="fable-rel-full-")
    try:
        args = ["unshare", "-rm", sys.executable, os.path.abspath(__file__), "--diskfull-child", tmp]
        if full:
            args.append("--full")
        try:
            p = subprocess.run(args, capture_output=True, text=True, timeout=900,
                               env={**os.environ, "FABLE_BIN": BIN})
        except FileNotFoundError:
            print("diskfull: skipped: unshare is not installed")
            return
        if p.returncode != 0 and "FAIL:" not in p.stdout:
            print(f"diskfull: skipped: cannot enter a user and mount namespace here ({p.stderr.strip()[:200]})")
            return
        sys.stdout.write(p.stdout)
        for line in p.stdout.splitlines():
            if line.startswith("FAIL:"):
                failures.append(line[6:])
    finally:
        subprocess.run(["chmod", "-R", "u+w", tmp], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--only", choices=["crash", "concurrency", "hostile", "diskfull", "evaluator",
                                       "reconcile"])
    ap.add_argument("--diskfull-child", help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if not os.path.exists(BIN):
        print(f"no fable binary at {BIN} (build it, or set FABLE_BIN)")
        return 2
    if a.diskfull_child:
        diskfull_child(a.diskfull_child, a.full)
        return 1 if failures else 0
    t = time.time()
    if a.only in (None, "crash"):
        crash(300 if a.full else 30, a.seed)
    if a.only in (None, "concurrency"):
        if a.full:
            concurrency(16, 30, 600)
        else:
            concurrency(4, 4, 60)
    if a.only in (None, "hostile"):
        hostile()
    if a.only in (None, "evaluator"):
        if a.full:
            evaluator(16, 25, 300, a.seed)
        else:
            evaluator(4, 10, 30, a.seed)
    if a.only in (None, "diskfull"):
        diskfull(a.full)
    if a.only in (None, "reconcile"):
        import reconcile  # tests/reliability/reconcile.py: `fable apply` killed mid-reconcile
        reconcile.reconcile(150 if a.full else 25, a.seed)
    print(f"{len(failures)} failure(s) in {time.time() - t:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
