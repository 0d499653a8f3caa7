"""The reconcile under SIGKILL (docs/reliability.md, "Reconcile"): `fable apply` killed at a
random point over an inventory whose sources change between runs, each kill followed by one
more `fable apply`, which must converge: every profile holds exactly the desired sources'
entries, no source is wired (in a profile or in the store) that the inventory does not name,
every user entry is still there, and no journal is left.

Imported by run.py (`--only reconcile`); also runnable alone:
    FABLE_BIN=target/debug/fable python3 tests/reliability/reconcile.py [--kills N] [--seed S]
"""

import importlib
import json
import os
import random
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The shared sandbox, seeds and failure list: run.py's own when it runs this experiment.
_main = sys.modules.get("__main__")
rel = _main if hasattr(_main, "Sandbox") else importlib.import_module("run")

NAMES = ["alpha", "beta", "gamma", "delta"]
FOREIGN = ["echo foreign-stop", "echo foreign-codex", "echo foreign-gemini", "echo foreign-cursor"]


def source(path, name, version):
    """A small source whose entry names `name` and whose content depends on `version`."""
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": f"python3 \"${{CLAUDE_PLUGIN_ROOT}}/hooks/{name}.py\" v{version}",
         "timeout": 10}]}]}
    if version % 2:
        hooks["Stop"] = [{"hooks": [{"type": "command",
                                      "command": f"python3 \"${{CLAUDE_PLUGIN_ROOT}}/hooks/{name}.py\" stop"}]}]
    rel.write(os.path.join(path, "hooks", "hooks.json"), json.dumps({"hooks": hooks}, indent=2))
    for i in range(40):
        rel.write(os.path.join(path, "hooks", "lib", f"m{i}.py"), f"# {name} {version if i < 3 else 0}\n")
    rel.write(os.path.join(path, "hooks", f"{name}.py"), "import sys\nsys.exit(0)\n")


def inventory(sb, wanted):
    text = "# this machine\nschema = 1\n\n"
    for name in wanted:
        text += f"[[source]]\nname = \"{name}\"  # kept\npath = \"{os.path.join(sb.tmp, 'src', name)}\"\n\n"
    rel.write(os.path.join(sb.fable_home, "fleet.toml"), text)


def wired_keys(text):
    return set(re.findall(r"\.fable/sources/([A-Za-z0-9._-]+)/", text))


def check(sb, wanted, versions, i):
    bad = []
    for host, path in rel.settings_files(sb).items():
        with open(path, "rb") as f:
            raw = f.read()
        try:
            json.loads(raw)
        except ValueError:
            bad.append(f"{path} does not parse")
            continue
        text = raw.decode()
        keys = wired_keys(text)
        if keys != set(wanted):
            bad.append(f"{host}: wired {sorted(keys)}, the inventory names {sorted(wanted)}")
        if not any(f in text for f in FOREIGN):
            bad.append(f"{host}: the user's own entry is gone")
        for name in wanted:
            if f"{name}.py\\\" v{versions[name]}" not in text and f"{name}.py\" v{versions[name]}" not in text:
                bad.append(f"{host}: {name} is not wired at version {versions[name]}")
    store = os.path.join(sb.fable_home, "sources")
    left = sorted(k for k in os.listdir(store) if os.path.isdir(os.path.join(store, k))) if os.path.isdir(store) else []
    if set(left) != set(wanted):
        bad.append(f"store holds {left}, the inventory names {sorted(wanted)}")
    odir = os.path.join(sb.fable_home, "owned")
    for rec in (os.listdir(odir) if os.path.isdir(odir) else []):
        if ".fable-tmp-" in rec:
            bad.append(f"a cut-off write of an ownership record is left: {rec}")
            continue
        if not rec.endswith(".json"):
            continue
        with open(os.path.join(odir, rec)) as f:
            recorded = {e["key"] for e in json.load(f).get("entries", [])}
        if not recorded <= set(wanted):
            bad.append(f"ownership record {rec} names {sorted(recorded - set(wanted))}, not in the inventory")
    with open(os.path.join(sb.fable_home, "fleet.toml")) as f:
        if f.read().count("# kept") != len(wanted):
            bad.append("the inventory's comments were not kept")
    jdir = os.path.join(sb.fable_home, "journal")
    journals = os.listdir(jdir) if os.path.isdir(jdir) else []
    if journals:
        bad.append(f"journals left: {journals}")
    code, out, err = sb.run("status", "--json")
    if code != 0:
        bad.append(f"status exited {code}: {err[:300]}")
    else:
        for s in json.loads(out)["sources"]:
            if s["state"] != "current":
                bad.append(f"status: {s['key']} is {s['state']}")
    for b in bad:
        rel.fail(f"reconcile kill {i}: {b}")
    return not bad


def reconcile(kills, seed):
    rng = random.Random(seed)
    sb = rel.Sandbox()
    try:
        rel.seed_profiles(sb)
        versions = {n: 0 for n in NAMES}
        for n in NAMES:
            source(os.path.join(sb.tmp, "src", n), n, 0)
        wanted = list(NAMES)
        inventory(sb, wanted)
        t = time.time()
        code, _, err = sb.run("apply")
        window = (time.time() - t) * 1.2
        if code != 0:
            rel.fail(f"reconcile: first apply exited {code}: {err}")
            return
        check(sb, wanted, versions, 0)
        killed_mid = 0
        for i in range(1, kills + 1):
            # The desired state changes between runs: sources join and leave, content moves.
            wanted = [n for n in NAMES if rng.random() < 0.6] or [rng.choice(NAMES)]
            for n in rng.sample(NAMES, 2):
                versions[n] += 1
                source(os.path.join(sb.tmp, "src", n), n, versions[n])
            inventory(sb, wanted)
            p = sb.popen("apply")
            time.sleep(rng.uniform(0, window))
            if p.poll() is None:
                killed_mid += 1
                window *= 1.03
            else:
                window *= 0.85
            p.send_signal(signal.SIGKILL)
            p.wait()
            code, out, err = sb.run("apply")
            if code != 0:
                rel.fail(f"reconcile kill {i}: the apply after the kill exited {code}: {err[:400]}")
                continue
            check(sb, wanted, versions, i)
        print(f"reconcile: {kills} kills of `fable apply` ({killed_mid} while it ran, final window "
              f"{window*1000:.0f} ms), each followed by one apply and checked: profiles, store, ownership records, inventory, journals, status")
    finally:
        sb.close()


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--kills", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    t = time.time()
    reconcile(a.kills, a.seed)
    print(f"{len(rel.failures)} failure(s) in {time.time() - t:.1f} s")
    sys.exit(1 if rel.failures else 0)
