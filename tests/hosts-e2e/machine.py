"""The machine scope against the real clients (docs/design.md, "Scopes"): inside the host's
namespace, an overlay puts a private, writable layer over /etc and /var/lib (nothing reaches the
real ones), `fable --scope machine install` writes the host's machine tier there, and the real
CLI, started from a HOME with no user-level entry at all, fires fable's hooks. On Claude Code,
also: with fable's managed-only switch on, a user-level entry does not fire and `fable doctor`
reports exactly that; a project's `disableAllHooks` silences every user-level hook there (the
machine-level ones still run: Claude Code does not let a project turn managed hooks off) and
the doctor, run inside that project, says so.

Cases: machine-scope (Claude Code, Gemini, Codex), managed-only and project-off (Claude Code)."""

import json
import os
import subprocess

import fakemodel as fm
import hosts as H

# Hosts whose machine tier fable writes, and the /etc directory the administrator creates
# first (fable wires a host's machine tier only once that directory exists; Claude Code's is
# always wired).
# Copilot CLI 1.0.102 reads no policy directory (/etc/github-copilot/policy.d fired nothing
# when tried here), so fable writes no machine tier for it.
MACHINE_HOSTS = {"claude": None, "gemini": "/etc/gemini-cli", "codex": "/etc/codex"}
CASES = ["machine-scope", "managed-only", "project-off"]
USER_MARK = "user-level-probe"


def overlay(root):
    """A private writable layer over /etc and /var/lib in this mount namespace; None when it
    cannot be made (then the cases skip with the reason)."""
    try:
        subprocess.run(["mount", "--make-rprivate", "/"], check=True, capture_output=True)
        for target in ("/etc", "/var/lib"):
            name = target.strip("/").replace("/", "-")
            upper = os.path.join(root, "overlay", name, "upper")
            work = os.path.join(root, "overlay", name, "work")
            os.makedirs(upper)
            os.makedirs(work)
            subprocess.run(["mount", "-t", "overlay", "overlay", "-o",
                            f"lowerdir={target},upperdir={upper},workdir={work}", target],
                           check=True, capture_output=True, text=True)
        # The namespace's resolv.conf (loopback only) was bound over the real /etc's file:
        # bind it again over the overlay's.
        resolv = os.path.join(root, "resolv.conf")
        if os.path.exists(resolv):
            subprocess.run(["mount", "--bind", resolv, "/etc/resolv.conf"], check=True)
        return None
    except (subprocess.CalledProcessError, OSError) as e:
        detail = getattr(e, "stderr", "") or str(e)
        return f"no overlay over /etc and /var/lib in this namespace: {str(detail).strip()}"


def user_probe_source(root):
    """A user-level source whose every hook writes a marker: it must not fire while the
    managed-only switch is on."""
    src = os.path.join(root, "user-probe-src")
    os.makedirs(os.path.join(src, "hooks"), exist_ok=True)
    seen = os.path.join(root, "user-probe")
    os.makedirs(seen, exist_ok=True)
    script = os.path.join(src, "hooks", "mark.sh")
    with open(script, "w") as f:
        f.write(f"#!/bin/sh\ncat > '{seen}'/$(date +%s%N)-$1.json; exit 0\n")
    os.chmod(script, 0o755)
    hooks = {ev: [{"hooks": [{"type": "command", "timeout": 10,
                              "command": f"\"${{FABLE_ROOT}}/hooks/mark.sh\" {ev}"}]}]
             for ev in ("SessionStart", "PreToolUse", "PostToolUse", "Stop")}
    with open(os.path.join(src, "hooks", "hooks.json"), "w") as f:
        json.dump({"description": USER_MARK, "hooks": hooks}, f, indent=2)
    return src, seen


def machine_cases(inner_cls, inn, host, fable, main_runs):
    """Runs the cases in a second HOME of this namespace; returns {case: [status, reason]}."""
    out = {}
    if host not in MACHINE_HOSTS:
        for c in CASES:
            out[c] = ["SKIP", "not applicable: fable writes no machine tier this client reads here"]
        return out
    if host != "claude":
        for c in ("managed-only", "project-off"):
            out[c] = ["SKIP", "not applicable: Claude Code's switches (allowManagedHooksOnly, disableAllHooks)"]
    why = overlay(inn.root)
    if why:
        for c in CASES:
            out.setdefault(c, ["SKIP", why])
        return out
    m = inner_cls(host, os.path.join(inn.root, "machine"), fable)
    m.dns = inn.dns
    try:
        H.setup_profile(host, m.env)
        if MACHINE_HOSTS[host]:
            # The administrator's step: the host's /etc directory (fable does not create a
            # host's /etc directory on a machine without that host).
            os.makedirs(MACHINE_HOSTS[host], mode=0o755, exist_ok=True)
        m.sh([fable, "--scope", "machine", "install", "--host", host])
        m.sh([fable, "--scope", "machine", "install", m.probe_source(), "--host", host])
        user_files = []
        for d, _, files in os.walk(m.home):
            user_files += [os.path.join(d, f) for f in files if f.endswith(".json")]
        wired = [f for f in user_files if "fable-hook" in open(f, errors="replace").read()]
        if wired:
            raise RuntimeError(f"user-level files hold fable's entries: {wired}")
        p = m.project("machine")
    except Exception as e:  # noqa: BLE001
        for c in CASES:
            out.setdefault(c, ["FAIL", f"setup: {e}"])
        return out

    def run_in(name, project):
        run = m.run_cli(name, project, fm.Script([fm.write("x.txt", "hi\n"), fm.text()]))
        main_runs[f"machine-{name}"] = run
        return run

    # ---- machine-scope: fable's machine-level entries fire with no user-level entry at all
    s0, _ = m.state(p)
    run = run_in("machine", p)
    s1, _ = m.state(p)
    evs = sorted({x["event"] for x in run["probe"]})
    changed = s0 is not None and s1 is not None and s0.get("stateRevision") != s1.get("stateRevision")
    if not [r for r in run["requests"] if r["main"]]:
        out["machine-scope"] = ["FAIL", f"no model request (rc {run['rc']}): " + run["stderr"][-300:].replace("\n", " | ")]
    elif not {"PreToolUse", "Stop"} <= set(evs):
        out["machine-scope"] = ["FAIL", f"the machine-level probe saw {evs}"]
    elif not changed:
        out["machine-scope"] = ["FAIL", "the machine-level evaluator did not change .fable/state.json"]
    else:
        out["machine-scope"] = ["PASS", f"machine-level events {evs}; no user-level entry"]
    if host != "claude":
        return out

    # ---- managed-only: a user-level entry does not fire; the doctor says why
    try:
        src, seen = user_probe_source(m.root)
        m.sh([fable, "install", src, "--host", host])
        # First the same setting in the user's own settings.json: Claude Code honours it only
        # from managed sources, so the user-level probe still fires there.
        settings = os.path.join(m.home, ".claude", "settings.json")
        original = open(settings).read()
        doc = json.loads(original)
        doc["allowManagedHooksOnly"] = True
        with open(settings, "w") as f:
            json.dump(doc, f, indent=2)
        p_user = m.project("user-switch")
        run_in("user-switch", p_user)
        in_user_file = [fn for fn in os.listdir(seen)
                        if json.load(open(os.path.join(seen, fn))).get("cwd") == p_user]
        with open(settings, "w") as f:
            f.write(original)
        for fn in os.listdir(seen):
            os.remove(os.path.join(seen, fn))
        m.sh([fable, "--scope", "machine", "install", "--managed-only", "on", "--yes", "--host", host])
        p2 = m.project("managed")
        run = run_in("managed", p2)
        fired_user = os.listdir(seen)
        fired_machine = sorted({x["event"] for x in run["probe"]})
        doctor = subprocess.run([fable, "doctor", "--json", "--no-probe"], cwd=p2, env=m.env,
                                capture_output=True, text=True, timeout=120)
        findings = json.loads(doctor.stdout).get("findings", []) if doctor.stdout.strip() else []
        said = [f for f in findings if f.get("id") == "machine.hooks_disabled"
                and f.get("severity") == "error" and "allowManagedHooksOnly" in f.get("message", "")]
        status = json.loads(m.sh([fable, "status", "--json"]).stdout)
        inert = [pp for s in status["sources"] for pp in s["profiles"] if pp["state"] == "inert"]
        if not in_user_file:
            out["managed-only"] = ["FAIL", "allowManagedHooksOnly in the user's own settings.json "
                                   "stopped the user-level probe (the doctor says Claude ignores it there)"]
        elif fired_user:
            out["managed-only"] = ["FAIL", f"the user-level probe fired: {sorted(fired_user)[:4]}"]
        elif not {"PreToolUse", "Stop"} <= set(fired_machine):
            out["managed-only"] = ["FAIL", f"the machine-level probe saw {fired_machine}"]
        elif not said:
            out["managed-only"] = ["FAIL", f"the doctor did not report it: {[f.get('id') for f in findings][:12]}"]
        elif not inert:
            out["managed-only"] = ["FAIL", "status does not say the user-level entries are inert"]
        else:
            out["managed-only"] = ["PASS", f"in the user's settings.json the switch is ignored "
                                   f"({len(in_user_file)} user-level hooks ran); from the machine tier: "
                                   f"user-level probe silent; machine-level {fired_machine}; "
                                   f"doctor: {said[0]['message'][:60]}...; status: {len(inert)} inert"]
        m.sh([fable, "--scope", "machine", "install", "--managed-only", "off", "--host", host])
    except Exception as e:  # noqa: BLE001
        out["managed-only"] = ["FAIL", f"{e}"]

    # ---- project-off: the project's disableAllHooks silences every user-level hook there
    # (fable's included); Claude Code still runs the machine-level (managed) ones, fable's
    # machine-scope entries included, and the doctor, run inside the project, says both.
    try:
        p3 = m.project("silenced")
        os.makedirs(os.path.join(p3, ".claude"), exist_ok=True)
        with open(os.path.join(p3, ".claude", "settings.json"), "w") as f:
            json.dump({"disableAllHooks": True}, f)
        run = run_in("silenced", p3)
        machine_fired = sorted({x["event"] for x in run["probe"]})
        user_fired = []
        for fn in os.listdir(seen):
            try:
                if json.load(open(os.path.join(seen, fn))).get("cwd") == p3:
                    user_fired.append(fn)
            except (OSError, ValueError):
                pass
        doctor = subprocess.run([fable, "doctor", "--json", "--no-probe"], cwd=p3, env=m.env,
                                capture_output=True, text=True, timeout=120)
        findings = json.loads(doctor.stdout).get("findings", []) if doctor.stdout.strip() else []
        said = [f for f in findings if f.get("id") == "project.hooks_disabled"
                and f.get("severity") == "error" and "machine-level ones still run" in f.get("message", "")]
        if not [r for r in run["requests"] if r["main"]]:
            out["project-off"] = ["FAIL", f"no model request (rc {run['rc']})"]
        elif user_fired:
            out["project-off"] = ["FAIL", f"the user-level probe fired in the silenced project: {user_fired[:4]}"]
        elif not {"PreToolUse", "Stop"} <= set(machine_fired):
            out["project-off"] = ["FAIL", f"the machine-level probe saw {machine_fired} (managed hooks silenced too?)"]
        elif not said:
            out["project-off"] = ["FAIL", f"the doctor did not report it: {[f.get('id') for f in findings][:12]}"]
        else:
            out["project-off"] = ["PASS", f"user-level silent, machine-level {machine_fired}; doctor: "
                                  f"{said[0]['message'][:60]}..."]
    except Exception as e:  # noqa: BLE001
        out["project-off"] = ["FAIL", f"{e}"]
    return out
