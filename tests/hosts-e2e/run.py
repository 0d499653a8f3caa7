#!/usr/bin/env python3
"""End-to-end suite: the real Claude Code / Codex / Gemini / Qwen Code / Copilot / OpenCode / Droid /
Kimi Code CLIs, offline, against a scripted fake model, with fable's hooks installed. See README.md
in this directory."""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import cline as CL  # noqa: E402
import fakemodel as fm  # noqa: E402
import crush as CR  # noqa: E402
import hosts as H  # noqa: E402
import kimi as KI  # noqa: E402
import machine as MA  # noqa: E402
import native as NA  # noqa: E402
import refusal as RF  # noqa: E402
import opencode as OC  # noqa: E402
import kilo as KL  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
WORK = os.path.join(REPO, "target", "hosts-e2e")
NPM_DIR = os.path.join(WORK, "npm")
# `--latest`: the newest version of each client on the npm registry instead of the pins, in a
# tree of its own; the outer process resolves them and hands them to each host's child.
if os.environ.get("FABLE_E2E_PINS"):
    NPM_DIR = os.path.join(WORK, "npm-latest")
    KI.PREFIX = os.path.join(WORK, "kimi-latest")
    CR.PREFIX = os.path.join(WORK, "crush-latest")
    for _h, _v in json.loads(os.environ["FABLE_E2E_PINS"]).items():
        if _h == "kimi":
            KI.PIN = (KI.PIN[0], _v, KI.PIN[2])
        elif _h == "crush":
            CR.PIN = H.PINNED[_h] = (CR.PIN[0], _v, CR.PIN[2])
        elif _h in H.PINNED:
            H.PINNED[_h] = (H.PINNED[_h][0], _v, H.PINNED[_h][2])
ALL_HOSTS = ["claude", "codex", "gemini", "qwen", "copilot", "opencode", "droid", "kimi", "pi", "crush", "cline", "kilo"]
# Hosts installed apart from the shared npm tree, each with its own `ensure(log)` (Kimi Code:
# with the Node 22 it needs; Crush: its postinstall downloads the Go binary); one that cannot be
# installed is skipped with one line.
OWN_PREFIX = {"kimi": KI, "crush": CR}
# Seconds after the others a host's child starts (a full run only): on two cores, Kimi Code's
# Node start-up competes with every other host's first run.
START_DELAY = {"kimi": 60}
CASES = ["hooks-cwd", "session-context", "write-generation", "guard-state", "failures-recovering",
         "stop-card", "stop-bounded", "stop-bounded-repeat", "watch-line", "loopback-only"] + MA.CASES + NA.CASES \
    + RF.CASES
RUN_DEADLINE = 45.0
# A host's first run pays its one-time start-up in a fresh HOME (OpenCode: well over 45 s on a
# loaded two-core machine, against 10 s on a quiet one).
FIRST_RUN_DEADLINE = 90.0
BOUNDED_DEADLINE = 60.0
MAX_MODEL_CALLS = 30
MAX_STOP_HOOKS = 100  # Stop hook runs (seen by the probe) before the harness kills a run
STOP_CAP = 3  # consecutive blocked stops fable is to allow before letting one through

# Cases expected to fail until the evaluator fixes land ("host case", one a line, # comments).
BUILTIN_XFAIL = """
"""

# Hosts whose headless mode never fires SessionStart (Qwen Code: interactive mode only): the
# SessionStart checks do not apply there.
# Hosts whose release under test fires no SessionStart under -p: Qwen Code before 0.24.4 (the
# first release measured to fire it there; 0.15.10 does not).
NO_HEADLESS_SESSION_START_BEFORE = {"qwen": ("0.24.4", "Qwen Code before 0.24.4 fires SessionStart only in interactive mode, never under -p")}


def _vt(v):
    return tuple(int(x) if x.isdigit() else 0 for x in v.split("-")[0].split("."))


NO_HEADLESS_SESSION_START = {h: why for h, (since, why) in NO_HEADLESS_SESSION_START_BEFORE.items()
                             if h in H.PINNED and _vt(H.PINNED[h][1]) < _vt(since)}

# Hosts that run no hook at all for a tool call that failed (Factory Droid 0.225.2: PostToolUse
# fires on the success path only, and it has no PostToolUseFailure): the failure streak cannot
# be seen there. Applied only while the host indeed sends nothing for the failing commands.
NO_FAILURE_HOOKS = {"droid": "Droid runs PostToolUse only after a tool succeeded and has no PostToolUseFailure"}

# Hosts that run SessionStart hooks but discard what they print (Kimi Code 2.1.0 awaits them and
# drops the result; only UserPromptSubmit's output reaches the model): fable's context cannot
# reach the model there. Applied only while no model request indeed holds it.
NO_SESSION_CONTEXT = {"kimi": "Kimi Code runs SessionStart hooks but discards their output",
                      "cline": "Cline starts TaskStart hooks detached and ignores their output"}

# Hosts with no hook that can hold the end of a turn (Cline 3.0.65: TaskComplete runs detached,
# its output ignored), so fable wires no Stop there: the Stop cases do not apply.
NO_STOP_HOOKS = {"cline": "Cline has no hook that can block or continue the end of a task; fable wires no Stop there"}

# Hosts that fire PreToolUse hooks and no other event (Crush 0.96): only the cases made of a
# PreToolUse apply there (hooks-cwd checks the PreToolUse payload's cwd and pwd, guard-state the
# block); the runs of the others are not made.
ONLY_PRE_TOOL_USE = {"crush": "Crush fires PreToolUse hooks only (no SessionStart, PostToolUse or Stop)"}

# Hosts whose Stop cases run through their server (OpenCode and its fork Kilo Code: `run`
# exits at the first idle, before the continuation prompt fable's plugin sends lands).
SERVED = {"opencode": OC, "kilo": KL}

CONTEXT_MARK = "[fable] lifecycle state of "
BLOCK_MARK = "[fable] BLOCKED"
CARD = "finish the probe card"
FAIL_CMD = "echo failing >&2; exit 3"
CLOSE_CARD_CMD = ("sed -i 's/^- \\[ \\] finish the probe card$/- [x] finish the probe card -- evidence: "
                  "ran the scripted e2e probe command/' .fable/LEDGER.md")


def reports_exit_code(payload):
    """True when a PostToolUse payload says how the command ended (an exit code field or an
    `Exit code N` / `exited with code N` marker in its text)."""
    if not isinstance(payload, dict):
        return False
    if payload.get("hook_event_name") == "PostToolUseFailure" or "exit_code" in payload:
        return True
    resp = payload.get("tool_response")
    if isinstance(resp, dict):
        return any(k in resp for k in ("exit_code", "exitCode", "returncode", "error"))
    text = json.dumps(resp)
    return "Exit code" in text or "exited with code" in text


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Outside the namespace: preconditions, npm, re-exec per host


def find_fable():
    b = os.environ.get("FABLE_BIN")
    if b:
        return os.path.abspath(b)
    for d in ("release", "debug"):
        p = os.path.join(REPO, "target", d, "fable")
        if os.access(p, os.X_OK):
            return p
    return None


def unshare_ok():
    if not shutil.which("unshare") or not shutil.which("ip"):
        return "unshare or ip not found"
    r = subprocess.run(["unshare", "-n", "-m", "true"], capture_output=True, text=True)
    if r.returncode != 0:
        return "unshare -n -m failed: " + (r.stderr.strip() or f"exit {r.returncode}")
    return None


def npm_installed(host):
    if host in OWN_PREFIX:
        return OWN_PREFIX[host].installed()
    pkg, ver, _ = H.PINNED[host]
    pj = os.path.join(NPM_DIR, "node_modules", pkg, "package.json")
    try:
        return json.load(open(pj)).get("version") == ver
    except (OSError, ValueError):
        return False


def ensure_npm(hosts):
    """Installs the hosts' packages into one tree; returns (why nothing can run, or None;
    {host: why its package did not install}). When the one install fails, each package is
    installed on its own, so that one client the registry cannot serve (a version with no
    linux build) fails alone."""
    hosts = [h for h in hosts if h not in OWN_PREFIX]
    missing = [h for h in hosts if not npm_installed(h)]
    if not missing:
        return None, {}
    if not shutil.which("npm"):
        return "npm not found", {}
    os.makedirs(NPM_DIR, exist_ok=True)
    specs = [f"{H.PINNED[h][0]}@{H.PINNED[h][1]}" for h in ALL_HOSTS if h not in OWN_PREFIX]  # one tree

    def install(specs):
        log(f"hosts-e2e: npm install {' '.join(specs)} (prefix {NPM_DIR})")
        return subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", NPM_DIR,
                               "--cache", os.path.join(WORK, "npm-cache"), *specs],
                              capture_output=True, text=True, timeout=900)

    r = install(specs)
    if r.returncode == 0 and all(npm_installed(h) for h in hosts):
        return None, {}
    failed = {}
    for h in [h for h in hosts if not npm_installed(h)]:
        r = install([f"{H.PINNED[h][0]}@{H.PINNED[h][1]}"])
        if r.returncode != 0 or not npm_installed(h):
            lines = [ln for ln in r.stderr.strip().splitlines() if "npm error" in ln]
            failed[h] = "npm install failed: " + " | ".join(lines[-3:] or [r.stderr.strip()[-300:]])
    return None, failed


def load_xfail(path):
    text = BUILTIN_XFAIL
    if path:
        text = open(path).read()
    out = set()
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            host, case = line.split()[:2]
            out.add((host, case))
    return out


def resolve_latest(hosts):
    """The newest version of each host's package on the npm registry (`npm view`)."""
    pins = {}
    for h in hosts:
        pkg = KI.PIN[0] if h == "kimi" else H.PINNED[h][0]
        r = subprocess.run(["npm", "view", pkg, "version"], capture_output=True, text=True,
                           timeout=60)
        if r.returncode != 0 or not r.stdout.strip():
            raise RuntimeError(f"npm view {pkg} version: {r.stderr.strip()[-200:]}")
        pins[h] = r.stdout.strip().splitlines()[-1].strip()
    return pins


def outer(args):
    t0 = time.time()
    hosts = [args.host] if args.host else list(ALL_HOSTS)
    if args.latest and not os.environ.get("FABLE_E2E_PINS"):
        if not shutil.which("npm"):
            print("SKIP hosts-e2e --latest: npm not found")
            return 0
        pins = resolve_latest(hosts)
        log("hosts-e2e --latest: " + ", ".join(f"{h} {v}" for h, v in pins.items()))
        os.environ["FABLE_E2E_PINS"] = json.dumps(pins)
        # Re-run with the versions in the environment, so that this process and each host's
        # child read the same pins and the latest tree.
        return subprocess.run([sys.executable, os.path.abspath(__file__)] + sys.argv[1:]).returncode
    why = unshare_ok()
    if why:
        print(f"SKIP hosts-e2e: {why}")
        return 0
    fable = find_fable()
    if not fable or not os.access(fable, os.X_OK):
        print("FAIL hosts-e2e setup: no fable binary (cargo build --release, or set FABLE_BIN)")
        print("0 passed, 1 failed")
        return 1
    why, not_installed = ensure_npm(hosts)
    if why:
        print(f"SKIP hosts-e2e: {why}")
        return 0
    for h in not_installed:
        hosts.remove(h)
    host_skips = []
    for h in [h for h in hosts if h in OWN_PREFIX]:
        why = OWN_PREFIX[h].ensure(log)
        if why:
            host_skips.append((h, why))
            hosts.remove(h)
    xfail = load_xfail(args.xfail)
    os.makedirs(os.path.join(WORK, "tmp"), exist_ok=True)
    root = tempfile.mkdtemp(prefix="run-", dir=os.path.join(WORK, "tmp"))
    procs = {}
    started = time.time()
    # Hosts with a start delay go last, once the others' first runs (the heaviest start-ups)
    # are under way; the suite's wall time is set by OpenCode's served runs anyway.
    delay = (lambda h: START_DELAY.get(h, 0)) if len(hosts) > 1 else (lambda h: 0)
    for h in sorted(hosts, key=delay):
        time.sleep(max(0.0, started + delay(h) - time.time()))
        d = os.path.join(root, h)
        os.makedirs(d)
        cmd = ["unshare", "-n", "-m", "--", sys.executable, os.path.abspath(__file__),
               "--inside", h, "--root", d, "--fable", fable]
        procs[h] = subprocess.Popen(cmd, stdout=open(os.path.join(d, "inner.out"), "w"),
                                    stderr=subprocess.STDOUT, start_new_session=True)
    results = {}
    for h, p in procs.items():
        try:
            p.wait(timeout=600)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, 9)
            p.wait()
        rf = os.path.join(root, h, "results.json")
        try:
            results[h] = json.load(open(rf))
        except (OSError, ValueError):
            tail = open(os.path.join(root, h, "inner.out")).read()[-800:]
            results[h] = {"cases": {c: ["FAIL", "harness error: " + tail.replace("\n", " | ")]
                                    for c in CASES}, "facts": {}}
    passed = failed = skipped = xfailed = xpassed = 0
    for h, why in not_installed.items():
        print(f"FAIL {h} setup: {why}")
        failed += 1
    for h, why in host_skips:
        print(f"SKIP {h}: not installed ({why})")
        skipped += 1
    for h in hosts:
        for case in CASES:
            status, reason = results[h]["cases"].get(case, ["FAIL", "not run"])
            expected = (h, case) in xfail
            if status == "PASS" and expected:
                print(f"XPASS {h} {case}: {reason}" if reason else f"XPASS {h} {case}")
                xpassed += 1
                passed += 1
            elif status == "PASS":
                print(f"PASS {h} {case}" + (f" ({reason})" if reason else ""))
                passed += 1
            elif status == "SKIP":
                print(f"SKIP {h} {case}: {reason}")
                skipped += 1
            elif expected:
                print(f"XFAIL {h} {case}: {reason}")
                xfailed += 1
            else:
                print(f"FAIL {h} {case}: {reason}")
                failed += 1
    sys.stdout.flush()
    report = {"root": root, "seconds": round(time.time() - t0, 1), "results": results}
    with open(os.path.join(WORK, "last-report.json"), "w") as f:
        json.dump(report, f, indent=2)
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    else:
        log(f"hosts-e2e: kept {root}")
    log(f"hosts-e2e: {report['seconds']} s; details in {os.path.join(WORK, 'last-report.json')}")
    line = f"{passed} passed, {failed} failed"
    if skipped:
        line += f", {skipped} skipped"
    if xfailed or xpassed:
        line += f" ({xfailed} xfail, {xpassed} xpass)"
    print(line)
    return 1 if failed else 0


# ---------------------------------------------------------------------------------------------
# Inside the namespace (one per host)


class Inner:
    def __init__(self, host, root, fable):
        self.host, self.root, self.fable = host, root, fable
        self.bins = os.path.join(NPM_DIR, "node_modules", ".bin")
        self.home = os.path.join(root, "home")
        self.tmp = os.path.join(root, "tmp")
        self.probe_dir = os.path.join(root, "probe")
        self.fbin = os.path.join(root, "bin")
        for d in (self.home, self.tmp, self.probe_dir, self.fbin, os.path.join(root, "xdg")):
            os.makedirs(d, exist_ok=True)
        os.symlink(fable, os.path.join(self.fbin, "fable"))
        gitcfg = os.path.join(root, "gitconfig")
        with open(gitcfg, "w") as f:
            f.write("[user]\n\tname = e2e\n\temail = e2e@example.invalid\n[init]\n\tdefaultBranch = main\n")
        x = os.path.join(root, "xdg")
        self.env = {
            "PATH": f"{self.fbin}:{self.bins}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
            "HOME": self.home, "USER": "root", "LOGNAME": "root", "SHELL": "/bin/bash",
            "LANG": "C.UTF-8", "TERM": "dumb", "NO_COLOR": "1", "CI": "1",
            "FABLE_HOME": os.path.join(self.home, ".fable"),
            "CODEX_HOME": os.path.join(self.home, ".codex"),
            "GIT_CONFIG_GLOBAL": gitcfg, "GIT_CONFIG_NOSYSTEM": "1",
            "XDG_CONFIG_HOME": f"{x}/config", "XDG_CACHE_HOME": f"{x}/cache",
            "XDG_DATA_HOME": f"{x}/data", "XDG_STATE_HOME": f"{x}/state",
            "XDG_RUNTIME_DIR": f"{x}/run",
            "TMPDIR": self.tmp, "TMP": self.tmp, "TEMP": self.tmp,
        }
        for k in ("config", "cache", "data", "state", "run"):
            os.makedirs(f"{x}/{k}", exist_ok=True)
        self.facts = {}
        self.runs = {}
        self.dns = None

    # -- namespace plumbing
    def network(self):
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
        resolv = os.path.join(self.root, "resolv.conf")
        with open(resolv, "w") as f:
            f.write("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")
        subprocess.run(["mount", "--bind", resolv, "/etc/resolv.conf"], check=True)
        self.dns = fm.DnsLog().start()
        links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
        self.facts["netns_links"] = [ln.split(":")[1].strip() for ln in links.splitlines()]

    def sh(self, argv, cwd=None, check=True, timeout=60):
        r = subprocess.run(argv, cwd=cwd, env=self.env, capture_output=True, text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: exit {r.returncode}: {r.stderr.strip()}")
        return r

    # -- install
    def probe_source(self):
        src = os.path.join(self.root, "probe-src")
        os.makedirs(os.path.join(src, "hooks"), exist_ok=True)
        script = os.path.join(src, "hooks", "probe.sh")
        with open(script, "w") as f:
            f.write("#!/bin/sh\n# records each hook's stdin and working directory\n"
                    f"d='{self.probe_dir}'; n=$(date +%s%N)-$$-$1\n"
                    "cat > \"$d/$n.json\"; pwd > \"$d/$n.pwd\"; exit 0\n")
        os.chmod(script, 0o755)
        hooks = {}
        for ev in ("SessionStart", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop"):
            hooks[ev] = [{"hooks": [{"type": "command", "timeout": 10,
                                     "command": f"\"${{FABLE_ROOT}}/hooks/probe.sh\" {ev}"}]}]
        with open(os.path.join(src, "hooks", "hooks.json"), "w") as f:
            json.dump({"description": "hosts-e2e probe", "hooks": hooks}, f, indent=2)
        return src

    def install(self):
        H.setup_profile(self.host, self.env)
        r = self.sh([self.fable, "install", "--host", self.host])
        self.facts["install"] = r.stdout.strip().splitlines()[-3:]
        self.sh([self.fable, "install", self.probe_source(), "--host", self.host])

    def trust_codex(self, projects):
        help_text = self.sh([self.fable, "install", "--help"]).stdout
        codex = os.path.join(self.bins, "codex")
        if "--trust-codex" in help_text:
            self.facts["codex_trust"] = "fable install --trust-codex"
            self.sh([self.fable, "install", "--trust-codex", "--host", "codex"])
        else:
            self.facts["codex_trust"] = "harness trust_codex_hooks_via_app_server (no --trust-codex yet)"
            H.trust_codex_hooks_via_app_server(codex, self.env, projects)
        after = H.codex_hooks_list(codex, self.env, projects[:1])
        self.facts["codex_hooks_list"] = after

    # -- projects
    def project(self, name):
        p = os.path.join(self.root, "proj", f"{self.host}-{name}")
        os.makedirs(p)
        self.sh(["git", "init", "-q"], cwd=p)
        self.sh([self.fable, "init"], cwd=p)
        return p

    def state(self, p):
        raw = open(os.path.join(p, ".fable", "state.json")).read()
        try:
            return json.loads(raw), raw
        except ValueError:
            return None, raw

    def fable_state(self, p):
        r = self.sh([self.fable, "state", "--json"], cwd=p, check=False)
        try:
            return json.loads(r.stdout)
        except ValueError:
            return {"error": r.stderr.strip()}

    # -- one CLI run
    def run_cli(self, name, proj, script, deadline=RUN_DEADLINE):
        out = {"name": name, "project": proj, "host": self.host}
        t0 = time.time()
        with fm.ModelServer(self.host, script, proj, MAX_MODEL_CALLS) as srv:
            argv, extra = H.command(self.host, self.bins, self.env, srv.port, self.tmp)
            env = dict(self.env, **extra)
            so = open(os.path.join(self.root, f"{name}.stdout"), "w")
            se = open(os.path.join(self.root, f"{name}.stderr"), "w")
            p = subprocess.Popen(argv, cwd=proj, env=env, stdin=subprocess.DEVNULL, stdout=so,
                                 stderr=se, start_new_session=True)
            killed = None
            while True:
                try:
                    p.wait(timeout=0.2)
                    break
                except subprocess.TimeoutExpired:
                    pass
                if srv.runaway.is_set():
                    killed = f"more than {MAX_MODEL_CALLS} model calls"
                elif self.stop_hook_runs(proj) > MAX_STOP_HOOKS:
                    killed = f"more than {MAX_STOP_HOOKS} Stop hook runs"
                elif time.time() - t0 > deadline:
                    killed = f"deadline {deadline:.0f} s"
                if killed:
                    try:
                        os.killpg(p.pid, 9)
                    except ProcessLookupError:
                        pass
                    p.wait()
                    break
            try:  # whatever the group left behind (hooks, children)
                os.killpg(p.pid, 9)
            except ProcessLookupError:
                pass
            if self.host == "cline":  # its hub daemon leaves the group
                CL.reap_hub(self.root)
            so.close()
            se.close()
            if not killed and srv.runaway.is_set():
                killed = f"more than {MAX_MODEL_CALLS} model calls (the harness refused the next one)"
            out["rc"] = p.returncode
            out["killed"] = killed
            out["seconds"] = round(time.time() - t0, 1)
            out["requests"] = srv.log
        out["stdout"] = open(os.path.join(self.root, f"{name}.stdout")).read()
        out["stderr"] = open(os.path.join(self.root, f"{name}.stderr")).read()
        out["dns"] = [q for q in self.dns.queries if t0 <= q["t"] <= time.time()]
        out["probe"] = self.probes(proj)
        self.runs[name] = out
        with open(os.path.join(self.root, f"{name}.requests.json"), "w") as f:
            json.dump(srv.log, f, indent=1)
        return out

    def stop_hook_runs(self, proj):
        """Stop hook runs of this project so far (cheap: file names, then cwd)."""
        tag = os.path.basename(proj)
        n = 0
        for fn in os.listdir(self.probe_dir):
            if fn.endswith("-Stop.json"):
                try:
                    if tag in open(os.path.join(self.probe_dir, fn)).read(4096):
                        n += 1
                except OSError:
                    pass
        return n

    def probes(self, proj):
        got = []
        for fn in sorted(os.listdir(self.probe_dir)):
            if not fn.endswith(".json"):
                continue
            base = os.path.join(self.probe_dir, fn[:-5])
            try:
                payload = json.load(open(base + ".json"))
            except (OSError, ValueError):
                payload = {"_raw": open(base + ".json").read()}
            pwd = open(base + ".pwd").read().strip() if os.path.exists(base + ".pwd") else None
            cwd = payload.get("cwd") if isinstance(payload, dict) else None
            if cwd == proj or pwd == proj:
                got.append({"event": fn.rsplit("-", 1)[-1][:-5], "pwd": pwd, "payload": payload})
        return got


def mains(run):
    return [r for r in run["requests"] if r["main"]]


def body_text(req):
    return json.dumps(req["body"], ensure_ascii=False)


def stop_events(run):
    return [p for p in run["probe"] if p["event"] == "Stop"]


def summarize(run):
    """Compact facts of one run for the report."""
    m = mains(run)
    return {
        "rc": run["rc"], "killed": run["killed"], "seconds": run["seconds"],
        "model_calls": len(m), "aux_calls": len(run["requests"]) - len(m),
        "paths": sorted({r["method"] + " " + r["path"].split("?")[0] for r in run["requests"]}),
        "answers": [r.get("answer", {}).get("kind") if isinstance(r.get("answer"), dict) else r.get("answer")
                    for r in m],
        "steps": [r.get("step") for r in m],
        "blocked_in_request": [BLOCK_MARK in body_text(r) for r in m],
        "stop_payloads": [{k: p["payload"].get(k) for k in ("hook_event_name", "stop_hook_active")}
                          for p in stop_events(run) if isinstance(p["payload"], dict)],
        "probe_events": [p["event"] + ("(" + str(p["payload"].get("tool_name")) + ")"
                                       if isinstance(p["payload"], dict) and p["payload"].get("tool_name") else "")
                         for p in run["probe"]],
        "dns": sorted({q["name"] for q in run["dns"]}),
        "stderr_tail": run["stderr"][-1500:],
        "stdout_tail": run["stdout"][-1500:],
    }


def tool_results(run, needle=None):
    """Texts the host sent back to the model after tool calls (best effort, per wire)."""
    out = []
    m = mains(run)
    if not m:
        return out
    last = m[-1]["body"]
    if run.get("host") == "claude" or "messages" in last:
        for msg in last.get("messages", []):
            for c in msg.get("content") or [] if isinstance(msg.get("content"), list) else []:
                if c.get("type") == "tool_result":
                    out.append(json.dumps(c.get("content"), ensure_ascii=False))
    if "input" in last:
        for it in last.get("input") or []:
            if isinstance(it, dict) and it.get("type", "").endswith("_output"):
                out.append(json.dumps(it.get("output"), ensure_ascii=False))
    if run.get("host") in ("qwen", "opencode", "pi", "crush", "cline", "kilo"):
        for msg in last.get("messages") or []:
            if isinstance(msg, dict) and msg.get("role") == "tool":
                out.append(json.dumps(msg.get("content"), ensure_ascii=False))
    if "contents" in last:
        for c in last.get("contents") or []:
            for part in c.get("parts") or []:
                if "functionResponse" in part:
                    out.append(json.dumps(part["functionResponse"], ensure_ascii=False))
    return out


# Hosts the watch-line case runs on (docs/design.md, "Integrity"): Claude Code, whose
# SessionStart context reaches the model on every run.
WATCH_HOSTS = {"claude"}
STALE_MARK = "changed since its snapshot; sessions still run the old version"
FOREIGN_MARK = "fable did not install appeared in"
PLANTED = "echo planted-by-hosts-e2e"


def watch_case(inn):
    """Four sessions in one project: nothing changed (no watch line); the probe source's script
    edited (the stale line, once, naming the source); a foreign SessionStart entry planted in
    the user's settings (the foreign line, once, naming its command); one more session (the
    foreign line is not repeated: it says what appeared since the last session)."""
    p = inn.project("watch")

    def first_request(name):
        run = inn.run_cli(name, p, fm.Script([fm.text()]))
        m = mains(run)
        if not m:
            raise RuntimeError(f"{name}: no model request (rc {run['rc']}, killed {run['killed']}): "
                               + run["stderr"][-300:].replace("\n", " | "))
        return body_text(m[0])

    try:
        t = first_request("watch-0")
        if STALE_MARK in t or FOREIGN_MARK in t:
            return False, "a watch line in the first session, before anything changed"
        src = os.path.join(inn.root, "probe-src")
        with open(os.path.join(src, "hooks", "probe.sh"), "a") as f:
            f.write("# edited between two sessions\n")
        t = first_request("watch-1")
        if t.count(STALE_MARK) != 1 or src not in t:
            return False, f"after the source edit: the stale line {t.count(STALE_MARK)} times (want 1, naming {src})"
        settings = os.path.join(inn.home, ".claude", "settings.json")
        doc = json.load(open(settings))
        doc.setdefault("hooks", {}).setdefault("SessionStart", []).append(
            {"hooks": [{"type": "command", "command": PLANTED}]})
        with open(settings, "w") as f:
            json.dump(doc, f, indent=2)
        t = first_request("watch-2")
        if t.count(FOREIGN_MARK) != 1 or PLANTED not in t:
            return False, f"after the planted entry: the foreign line {t.count(FOREIGN_MARK)} times (want 1)"
        t = first_request("watch-3")
        if FOREIGN_MARK in t:
            return False, "the foreign line again in the session after the one that reported it"
        return True, "no line, the stale line once, the foreign line once, then not again"
    except Exception as e:  # noqa: BLE001
        return False, f"setup: {e}"


def run_post_and_stop_cases(inn, host, projects, result, not_applicable, facts):
    """Runs 3-6: the cases made of PostToolUse(Failure) and Stop hooks."""
    # ---- run 3: two failing shell commands (case 5)
    p = projects["fail"]
    run = inn.run_cli("fail", p, fm.Script([fm.shell(FAIL_CMD), fm.shell(FAIL_CMD), fm.text()]))
    s1, _ = inn.state(p)
    facts["fail"] = summarize(run)
    post = [pp for pp in run["probe"] if pp["event"] in ("PostToolUse", "PostToolUseFailure")]
    facts["fail"]["post_payloads"] = [{k: pp["payload"].get(k) for k in
                                       ("hook_event_name", "tool_name", "tool_response", "error", "exit_code")
                                       if k in pp["payload"]} for pp in post if isinstance(pp["payload"], dict)]
    facts["fail"]["tool_results"] = tool_results(run)
    facts["fail"]["state_after"] = {k: (s1 or {}).get(k) for k in ("phase", "failureStreak", "lastDecision")}
    if not mains(run):
        result("failures-recovering", False, f"no model request (rc {run['rc']})")
    elif not post and host in NO_FAILURE_HOOKS:
        not_applicable("failures-recovering", NO_FAILURE_HOOKS[host])
    elif len(post) < 2:
        result("failures-recovering", False, f"{len(post)} PostToolUse(Failure) hooks for 2 failing commands")
    elif (s1 or {}).get("phase") != "recovering":
        result("failures-recovering", False,
               f"phase {(s1 or {}).get('phase')!r}, failureStreak {(s1 or {}).get('failureStreak')} after two "
               f"'exit 3' commands; host sent {[ (x.get('hook_event_name'), str(x.get('tool_response', x.get('error')))[:60]) for x in facts['fail']['post_payloads']]}")
    else:
        # Codex 0.171 sends a Bash result as the bare output string, with no exit code: fable
        # reads the call's exit code from the host's transcript (payload/src/transcript.rs).
        via = ("; the host reports no exit codes, read from its transcript"
               if host == "codex" and not any(reports_exit_code(pp["payload"]) for pp in post) else "")
        result("failures-recovering", True, f"failureStreak {s1.get('failureStreak')}{via}")

    if host in NO_STOP_HOOKS:
        for c in ("stop-card", "stop-bounded", "stop-bounded-repeat"):
            not_applicable(c, NO_STOP_HOOKS[host])
        return

    # ---- run 4: Stop with an open card, the model closes it on the retry (case 6)
    p = projects["card"]
    with open(os.path.join(p, ".fable", "LEDGER.md"), "a") as f:
        f.write(f"\n- [ ] {CARD}\n")
    card = fm.Script([fm.text(), fm.shell(CLOSE_CARD_CMD), fm.text()])
    if host == "qwen":  # Qwen 0.24 refuses a `sed -i` of a file not read in the session first
        card = fm.Script([fm.text(), fm.read(".fable/LEDGER.md"), fm.shell(CLOSE_CARD_CMD), fm.text()])
    if host in SERVED:  # `opencode run` exits at the first idle: serve the turn instead
        run = SERVED[host].run_served(inn, "card", p, card, OC.SERVE_DEADLINE, MAX_MODEL_CALLS)
    else:
        run = inn.run_cli("card", p, card)
    facts["card"] = summarize(run)
    ledger = open(os.path.join(p, ".fable", "LEDGER.md")).read()
    m = mains(run)
    blocked_seen = [BLOCK_MARK in body_text(r) for r in m]
    if not m:
        result("stop-card", False, f"no model request (rc {run['rc']})")
    elif run["killed"]:
        result("stop-card", False, f"killed: {run['killed']} after {len(m)} model calls")
    elif len(m) < 2:
        result("stop-card", False, f"the host ended after the first answer ({len(m)} model call, rc {run['rc']}): "
               f"the blocked Stop did not make it continue")
    elif not any(blocked_seen[1:]):
        result("stop-card", False, f"the host continued ({len(m)} calls) but fable's block reason is not in the retry")
    elif f"- [x] {CARD}" not in ledger:
        result("stop-card", False, "the card was not closed by the retry")
    elif len(m) > 4:
        result("stop-card", False, f"the turn took {len(m)} model calls after the card was closed")
    else:
        result("stop-card", True, f"{len(m)} model calls, rc {run['rc']}")

    # ---- runs 5, 6: a Stop that always blocks (invalid state) ends in bounded calls (case 7),
    # with a different answer each turn, then with the same answer repeated (a stuck model)
    for name, case, numbered in (("bounded", "stop-bounded", True), ("repeat", "stop-bounded-repeat", False)):
        p = projects[name]
        sp = os.path.join(p, ".fable", "state.json")
        st = json.load(open(sp))
        st["schemaVersion"] = 99  # newer schema: invalid, blocks Stop even with stop_hook_active
        json.dump(st, open(sp, "w"), indent=2)
        script = fm.Script([fm.text(numbered=numbered)])
        if host in SERVED:  # served, as stop-card: `opencode run` would end at the first idle
            run = SERVED[host].run_served(inn, name, p, script, OC.SERVE_DEADLINE, MAX_MODEL_CALLS)
        else:
            run = inn.run_cli(name, p, script, deadline=BOUNDED_DEADLINE)
        facts[name] = summarize(run)
        n, stops = len(mains(run)), len(stop_events(run))
        facts[name]["stop_hook_runs"] = stops
        facts[name]["stop_hook_active"] = [p_["payload"].get("stop_hook_active") for p_ in stop_events(run)[:6]
                                           if isinstance(p_["payload"], dict)]
        facts[name].pop("stop_payloads", None)
        if not n:
            result(case, False, f"no model request (rc {run['rc']})")
        elif run["killed"]:
            result(case, False, f"never ended: killed ({run['killed']}) after {n} model calls, {stops} Stop hook runs")
        elif n > 1 + STOP_CAP:
            result(case, False, f"ended by itself after {n} model calls, {stops} Stop hook runs "
                   f"(want <= {1 + STOP_CAP}: cap of {STOP_CAP} blocked stops)")
        else:
            result(case, True, f"{n} model calls, {stops} Stop hook runs, rc {run['rc']}")


def inner_main(host, root, fable):
    inn = Inner(host, root, fable)
    cases, facts = {}, inn.facts
    facts["host_version"] = H.PINNED[host][1]

    def result(case, ok, reason=""):
        cases[case] = ["PASS" if ok else "FAIL", reason]

    def not_applicable(case, reason):
        cases[case] = ["SKIP", "not applicable: " + reason]

    try:
        inn.network()
        inn.install()
        projects = {n: inn.project(n) for n in ("write", "deny", "fail", "card", "bounded", "repeat")}
        if host == "codex":
            inn.trust_codex(list(projects.values()))
    except Exception as e:  # noqa: BLE001
        for c in CASES:
            cases[c] = ["FAIL", f"setup: {e}"]
        json.dump({"cases": cases, "facts": facts}, open(os.path.join(root, "results.json"), "w"), indent=2)
        return

    # ---- run 1: one write (cases 1, 2, 3)
    p = projects["write"]
    s0, _ = inn.state(p)
    script = fm.Script([fm.write("x.txt", "hi\n"), fm.text()])
    if host in SERVED:  # `opencode run` exits at the first idle, racing the Stop hook it starts
        run = SERVED[host].run_served(inn, "write", p, script, OC.SERVE_DEADLINE, MAX_MODEL_CALLS)
    else:
        run = inn.run_cli("write", p, script, deadline=FIRST_RUN_DEADLINE)
    run["host"] = host
    s1, _ = inn.state(p)
    facts["write"] = summarize(run)
    facts["write"]["state_after"] = s1
    facts["write"]["tool_results"] = tool_results(run)
    m = mains(run)
    if not m:
        reason = f"no model request reached the fake server (rc {run['rc']}, killed {run['killed']}): " \
                 + run["stderr"][-300:].replace("\n", " | ")
        for c in ("hooks-cwd", "session-context", "write-generation"):
            result(c, False, reason)
    else:
        evs = {pp["event"] for pp in run["probe"]}
        bad_pwd = [pp for pp in run["probe"] if pp["pwd"] != p]
        bad_cwd = [pp for pp in run["probe"] if isinstance(pp["payload"], dict)
                   and (pp["payload"].get("cwd") or (pp["payload"].get("workspaceRoots") or [None])[0]) != p]
        changed = s1 is not None and s0 is not None and s1.get("stateRevision") != s0.get("stateRevision")
        need = {"SessionStart", "PostToolUse", "Stop"} - ({"Stop"} if host in NO_STOP_HOOKS else set())
        if host in NO_HEADLESS_SESSION_START:
            need.discard("SessionStart")
        if host in ONLY_PRE_TOOL_USE:
            need = {"PreToolUse"}
            changed = True  # a PreToolUse moves no state: the payload's cwd and pwd are checked
        if not need <= evs:
            result("hooks-cwd", False, f"probe saw events {sorted(evs)}, missing {sorted(need - evs)}")
        elif bad_pwd or bad_cwd:
            result("hooks-cwd", False, f"hook pwd/cwd not the project: "
                   f"{[(x['event'], x['pwd'], x['payload'].get('cwd')) for x in (bad_pwd + bad_cwd)[:3]]}")
        elif not changed:
            result("hooks-cwd", False, "hooks ran in the project but .fable/state.json did not change")
        else:
            result("hooks-cwd", True, f"events {sorted(evs)}")
        want = CONTEXT_MARK + p
        hit = [i for i, r in enumerate(m) if want in body_text(r)]
        if host in NO_HEADLESS_SESSION_START:
            not_applicable("session-context", NO_HEADLESS_SESSION_START[host])
        elif host in ONLY_PRE_TOOL_USE:
            not_applicable("session-context", ONLY_PRE_TOOL_USE[host])
        elif hit:
            result("session-context", True, f"in model request #{hit[0] + 1}")
        elif host in NO_SESSION_CONTEXT and "SessionStart" in evs:
            not_applicable("session-context", NO_SESSION_CONTEXT[host])
        else:
            any_mark = any(CONTEXT_MARK in body_text(r) for r in m)
            result("session-context", False, "fable's SessionStart context is not in any model request"
                   + (" (a context for another path is)" if any_mark else ""))
        g0, g1 = (s0 or {}).get("mutationGeneration"), (s1 or {}).get("mutationGeneration")
        wrote = os.path.exists(os.path.join(p, "x.txt"))
        if host in ONLY_PRE_TOOL_USE:
            not_applicable("write-generation", ONLY_PRE_TOOL_USE[host] + ": fable never sees the write done")
        elif not wrote:
            result("write-generation", False, f"the host did not create x.txt (tools offered: {m[0].get('tools')})")
        elif s1 is None:
            result("write-generation", False, "state.json is not valid JSON after the write")
        elif g1 - g0 != 1:
            fs = inn.fable_state(p)
            result("write-generation", False, f"mutationGeneration {g0} -> {g1} (pending {fs.get('pendingMutations')})")
        else:
            result("write-generation", True, f"{g0} -> {g1}")

    # ---- run 2: write to .fable/state.json (case 4)
    p = projects["deny"]
    s0, raw0 = inn.state(p)
    target = ".fable/state.json"
    acts = ([fm.read(target)] if host == "claude" else []) + [fm.write(target, "{}\n"), fm.text()]
    run = inn.run_cli("deny", p, fm.Script(acts))
    s1, raw1 = inn.state(p)
    facts["deny"] = summarize(run)
    facts["deny"]["tool_results"] = tool_results(run)
    pre = [pp for pp in run["probe"] if pp["event"] == "PreToolUse"]
    facts["deny"]["pre_tool_use_tools"] = [pp["payload"].get("tool_name", pp["payload"].get("toolName"))
                                           for pp in pre if isinstance(pp["payload"], dict)]
    if not mains(run):
        result("guard-state", False, f"no model request (rc {run['rc']}): " + run["stderr"][-300:].replace("\n", " | "))
    elif s1 is None:
        result("guard-state", False, f"the write went through: state.json is now {raw1[:80]!r}")
    elif set(s1) != set(s0) or s1.get("schemaVersion") != s0.get("schemaVersion") \
            or s1.get("workspaceId") != s0.get("workspaceId"):
        result("guard-state", False, f"the write went through: state.json is now {raw1[:80]!r}")
    else:
        told = any(BLOCK_MARK in t for t in tool_results(run))
        write_pre = [t for t in facts["deny"]["pre_tool_use_tools"] if t in ("Write", "apply_patch", "write_file", "create", "Create", "write", "editor")]
        # Cline cancels the task (no per-call denial): fable's reason ends its run, and the
        # probe, a source after fable's, is not run for the cancelled call.
        cancelled = host == "cline" and CL.cancelled(inn.home, p, BLOCK_MARK)
        # OpenCode runs plugins in turn and a throw ends the chain (pi: the first block does):
        # the probe, installed after fable's own plugin, never sees the refused call; fable's
        # reason in the tool result shows that the PreToolUse ran.
        # A host that reports the refused write back (Kimi Code: a PostToolUseFailure carrying
        # fable's reason) must not have it counted: the tool never ran.
        echoed = [pp for pp in run["probe"] if pp["event"] in ("PostToolUse", "PostToolUseFailure")
                  and isinstance(pp["payload"], dict) and BLOCK_MARK in json.dumps(pp["payload"])]
        counted = {k: (s0.get(k), s1.get(k)) for k in ("mutationGeneration", "failureStreak")
                   if s0.get(k) != s1.get(k)}
        facts["deny"]["refusal_echoed"] = [pp["event"] for pp in echoed]
        if not write_pre and not (host in ("opencode", "pi", "kilo") and told) and not cancelled:
            result("guard-state", False, "no PreToolUse of the write tool was seen (the host never tried the write)")
        elif echoed and counted:
            result("guard-state", False, f"the host reported the refused write back ({echoed[0]['event']}) "
                   f"and fable counted it: {counted}")
        elif cancelled:
            result("guard-state", True, "blocked: Cline cancelled the task with fable's reason")
        else:
            result("guard-state", True, "blocked; the model was told" if told else
                   "state intact, but the block reason did not reach the model's tool result")

    if host in ONLY_PRE_TOOL_USE:
        for c in ("failures-recovering", "stop-card", "stop-bounded", "stop-bounded-repeat"):
            not_applicable(c, ONLY_PRE_TOOL_USE[host])
    else:
        run_post_and_stop_cases(inn, host, projects, result, not_applicable, facts)

    # ---- runs 7-10: the SessionStart watch line (case 9)
    if host in WATCH_HOSTS:
        result("watch-line", *watch_case(inn))
    else:
        not_applicable("watch-line", "checked on Claude Code; the watch itself does not depend on the host "
                       "(tests/watch.rs)")

    # ---- a write the host itself refuses (tests/hosts-e2e/refusal.py)
    if host in ONLY_PRE_TOOL_USE:
        not_applicable("refused-write", ONLY_PRE_TOOL_USE[host] + ": nothing after a call reaches fable")
    else:
        try:
            cases.update(RF.refusal_case(inn, host, inn.runs))
        except Exception as e:  # noqa: BLE001
            cases["refused-write"] = ["FAIL", f"harness: {e}"]

    # ---- sources in another host's format (tests/hosts-e2e/native.py)
    try:
        cases.update(NA.native_case(inn, host, fable, inn.runs))
    except Exception as e:  # noqa: BLE001
        cases["native-sources"] = ["FAIL", f"harness: {e}"]

    # ---- the machine scope (tests/hosts-e2e/machine.py), in a second HOME of this namespace
    try:
        cases.update(MA.machine_cases(Inner, inn, host, fable, inn.runs))
    except Exception as e:  # noqa: BLE001
        for c in MA.CASES:
            cases.setdefault(c, ["FAIL", f"harness: {e}"])

    # ---- case 8: nothing tried to leave loopback
    names = sorted({q["name"] for r in inn.runs.values() for q in r["dns"]})
    peers = sorted({q["peer"] for r in inn.runs.values() for q in r["requests"]})
    hosts_hdr = sorted({str(q["host"]) for r in inn.runs.values() for q in r["requests"]})
    facts["dns_all"] = [q["name"] for q in inn.dns.queries]
    facts["request_hosts"] = hosts_hdr
    if names:
        result("loopback-only", False, f"DNS lookups of {names}")
    elif peers and peers != ["127.0.0.1"]:
        result("loopback-only", False, f"requests from {peers}")
    elif not all(mains(r) for r in inn.runs.values()):
        result("loopback-only", False, "some runs made no model request to the fake server")
    else:
        result("loopback-only", True)
    json.dump({"cases": cases, "facts": facts}, open(os.path.join(root, "results.json"), "w"), indent=2)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--host", choices=ALL_HOSTS)
    ap.add_argument("--keep", action="store_true", help="keep the temp dir")
    ap.add_argument("--latest", action="store_true",
                    help="the newest version of each client on the npm registry, not the pins")
    ap.add_argument("--xfail", metavar="FILE", help="cases expected to fail ('host case' a line); "
                    "default: the built-in list")
    ap.add_argument("--inside", help=argparse.SUPPRESS)
    ap.add_argument("--root", help=argparse.SUPPRESS)
    ap.add_argument("--fable", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.inside:
        inner_main(args.inside, args.root, args.fable)
        return 0
    return outer(args)


if __name__ == "__main__":
    sys.exit(main())
