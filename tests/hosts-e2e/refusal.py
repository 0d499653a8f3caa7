"""A host's own refusal of a call is not a failure: the model writes over a file it never read,
twice. Claude Code and Qwen Code (0.24) refuse such a write ("File has not been read yet" /
"... has not been read in this session"); whatever the host reports back (nothing, or a
PostToolUseFailure carrying its refusal), fable must count neither a mutation nor a command
failure, since nothing ran. A host that lets the write through is not applicable.

Case: refused-write (every host)."""

import json
import os

import fakemodel as fm

CASES = ["refused-write"]
ORIGINAL = "written before the session\n"


def refusal_case(inn, host, main_runs):
    try:
        p = inn.project("refused")
        with open(os.path.join(p, "old.txt"), "w") as f:
            f.write(ORIGINAL)
        s0, _ = inn.state(p)
        run = inn.run_cli("refused", p, fm.Script([fm.write("old.txt", "over\n"), fm.write("old.txt", "over\n"),
                                                    fm.text()]))
        main_runs["refused"] = run
        s1, _ = inn.state(p)
    except Exception as e:  # noqa: BLE001
        return {"refused-write": ["FAIL", f"setup: {e}"]}
    if not [r for r in run["requests"] if r["main"]]:
        return {"refused-write": ["FAIL", f"no model request (rc {run['rc']})"]}
    if open(os.path.join(p, "old.txt")).read() != ORIGINAL:
        return {"refused-write": ["SKIP", "not applicable: the host writes over a file it did not read"]}
    if s1 is None:
        return {"refused-write": ["FAIL", "state.json is not valid JSON after the run"]}
    moved = {k: (s0.get(k), s1.get(k)) for k in ("mutationGeneration", "failureStreak", "phase")
             if s0.get(k) != s1.get(k)}
    reported = sorted({pp["event"] for pp in run["probe"]
                       if pp["event"] in ("PostToolUse", "PostToolUseFailure")
                       and "read" in json.dumps(pp["payload"]).lower()})
    if moved:
        return {"refused-write": ["FAIL", f"the host refused the write (reported as {reported or 'nothing'}) "
                                          f"and fable counted it: {moved}"]}
    return {"refused-write": ["PASS", f"the host refused the write (reported as {reported or 'no hook'}); "
                                      f"state unchanged"]}
