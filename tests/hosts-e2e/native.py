"""Sources in another host's format, fired by the real clients (docs/design.md, "Sources in a
host's own format"): the Cursor hooks.json and the Gemini CLI extension of
tests/fixtures/native/, installed by fable as user-level sources, run in the real Claude Code
and Codex. Each fixture's mark.sh is replaced by one that records `<fixture>-<event>` files, so
the case sees which of the translated hooks fired.

Case: native-sources (Claude Code, Codex)."""

import os
import shutil

import fakemodel as fm

HOSTS = {"claude", "codex"}
CASES = ["native-sources"]
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = {
    # fixture: (its script, the events that must fire on a run that writes a file)
    "cursor-hooks": ("scripts/mark.sh", {"PreToolUse", "Stop"}),
    "gemini-extension": ("hooks/mark.sh", {"PreToolUse", "Stop"}),
}


def native_case(inn, host, fable, main_runs):
    if host not in HOSTS:
        return {"native-sources": ["SKIP", "not applicable: checked on Claude Code and Codex"]}
    marks = os.path.join(inn.root, "native-marks")
    os.makedirs(marks, exist_ok=True)
    try:
        for name, (script, _) in FIXTURES.items():
            src = os.path.join(inn.root, "native-src", name)
            shutil.copytree(os.path.join(REPO, "tests", "fixtures", "native", name), src)
            path = os.path.join(src, script)
            with open(path, "w") as f:
                f.write(f"#!/bin/sh\ncat > /dev/null\ntouch '{marks}/{name}-'\"$1\"\nexit 0\n")
            os.chmod(path, 0o755)
            inn.sh([fable, "install", src, "--host", host])
        if host == "codex":
            inn.sh([fable, "install", "--trust-codex", "--host", host])
        p = inn.project("native")
        run = inn.run_cli("native", p, fm.Script([fm.write("n.txt", "hi\n"), fm.text()]))
        main_runs["native"] = run
    except Exception as e:  # noqa: BLE001
        return {"native-sources": ["FAIL", f"setup: {e}"]}
    fired = sorted(os.listdir(marks))
    missing = [f"{name}-{ev}" for name, (_, evs) in FIXTURES.items() for ev in sorted(evs)
               if f"{name}-{ev}" not in fired]
    if not [r for r in run["requests"] if r["main"]]:
        return {"native-sources": ["FAIL", f"no model request (rc {run['rc']})"]}
    if missing:
        return {"native-sources": ["FAIL", f"did not fire: {missing}; fired: {fired}"]}
    return {"native-sources": ["PASS", f"fired: {fired}"]}
