#!/usr/bin/env python3
"""A fleet at scale through Ansible: N simulated machines (default 100) on localhost.

Each machine is a host of an Ansible inventory with `ansible_connection=local` and its own
HOME, FABLE_HOME and `machine_root` (a directory reserved for the machine scope) under one
temporary directory; fable runs there with that HOME and FABLE_HOME, and FABLE_SYSTEM_ROOT
set to the machine_root (the host variable fable_environment). Before the first run the machines drift, by their number modulo 5:

  0  never installed (an agent's settings file, no fable)
  1  stale: the inventory applied while the `team` source was at an older version
  2  hand-edited: applied, then a wired command of `team` edited in ~/.claude/settings.json
  3  converged, plus a foreign hook the user wrote by hand (`echo mine`)
  4  stale, plus a high-risk foreign hook (`curl http://x | sh`)

The fleet report (the collection's playbook fable.fable.fleet_report) must say exactly that.
Then ONE ansible-playbook run of the role converges every machine (each one's `fable status
--json` says every source is current; the hand edit is gone, the foreign hooks are kept;
machines of kind 3 are not changed), a SECOND run changes nothing on any host (PLAY RECAP),
and the report afterwards says every machine is current and lists the foreign and high-risk
entries. Prints the wall time of each run and the CPU time of ansible-playbook with
everything it ran (on a shared machine the wall time follows the load; the CPU time less).

Usage: python fleet.py [--machines N] [--forks F] [--keep]   (needs FABLE_BIN; run.sh runs it
with 10 machines in the venv holding ansible-core).
"""

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
COLLECTIONS = os.path.dirname(HERE)  # contrib/ansible, holding ansible_collections/
BIN = os.path.dirname(os.path.abspath(sys.executable))
KINDS = ('never', 'stale', 'edited', 'foreign', 'stale+high-risk')
HIGH_RISK = 'curl http://x | sh'


def die(message, output=""):
    if output:
        sys.stderr.write(output[-6000:] + "\n")
    sys.stderr.write("fleet: FAILED: %s\n" % message)
    sys.exit(1)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def make_source(directory, name, version):
    hooks = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "timeout": 10,
         "command": 'sh "${CLAUDE_PLUGIN_ROOT}/hooks/check.sh" %s' % name}]}]}}
    write(os.path.join(directory, "hooks", "hooks.json"), json.dumps(hooks, indent=2) + "\n")
    write(os.path.join(directory, "hooks", "check.sh"), "# %s %s\nexit 0\n" % (name, version))


class Fleet:
    def __init__(self, fable, machines, forks):
        self.fable = fable
        self.forks = forks
        self.root = tempfile.mkdtemp(prefix="fable-fleet-")
        self.names = ["m%03d" % i for i in range(machines)]
        self.gitconfig = os.path.join(self.root, "gitconfig")
        write(self.gitconfig, "[user]\n\tname = fable test\n\temail = test@example.invalid\n")
        ansible_cfg = os.path.join(self.root, "ansible.cfg")
        write(ansible_cfg, "[defaults]\n")
        controller = os.path.join(self.root, "controller")
        os.makedirs(controller)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANSIBLE_", "FABLE_", "GIT_", "XDG_", "CLAUDE", "CODEX",
                                    "GEMINI", "QWEN", "CURSOR"))}
        # The controller's own HOME is in the sandbox too; each machine's is below.
        env.update(
            HOME=controller,
            FABLE_HOME=os.path.join(controller, ".fable"),
            GIT_CONFIG_GLOBAL=self.gitconfig,
            GIT_CONFIG_NOSYSTEM="1",
            PATH=BIN + os.pathsep + env.get("PATH", "/usr/bin:/bin"),
            ANSIBLE_CONFIG=ansible_cfg,
            ANSIBLE_HOME=os.path.join(self.root, "ansible-home"),
            ANSIBLE_LOCAL_TEMP=os.path.join(self.root, "ansible-tmp"),
            ANSIBLE_REMOTE_TMP=os.path.join(self.root, "ansible-remote-tmp"),
            ANSIBLE_COLLECTIONS_PATH=COLLECTIONS,
            ANSIBLE_NOCOLOR="1",
            ANSIBLE_RETRY_FILES_ENABLED="0",
            ANSIBLE_PIPELINING="1",
            ANSIBLE_FORKS=str(forks),
            ANSIBLE_HOST_KEY_CHECKING="0",
            ANSIBLE_INVENTORY_UNPARSED_WARNING="0",
        )
        self.env = env
        self.team = os.path.join(self.root, "sources", "team")
        self.security = os.path.join(self.root, "sources", "security")
        make_source(self.team, "team", "v1")
        make_source(self.security, "security", "v1")
        self.inventory = ('# the team\'s machines\nschema = 1\n\n'
                          '[[source]]\nname = "team"\npath = "%s"\n\n'
                          '[[source]]\nname = "security"\npath = "%s"\n'
                          % (self.team, self.security))
        hosts = {}
        for name in self.names:
            home = self.home(name)
            os.makedirs(os.path.join(home, ".claude"))
            os.makedirs(self.machine_root(name))
            write(self.settings_path(name), json.dumps({"mine": True}, indent=2) + "\n")
            hosts[name] = dict(
                ansible_connection="local",
                ansible_python_interpreter=sys.executable,
                machine_root=self.machine_root(name),
                fable_environment=self.machine_env(name, only_fable=True),
            )
        self.hosts_file = os.path.join(self.root, "hosts.json")
        write(self.hosts_file, json.dumps({"fleet": {"hosts": hosts}}, indent=1))
        self.vars_file = os.path.join(self.root, "vars.json")
        write(self.vars_file, json.dumps(dict(fable_bin=fable, fable_inventory=self.inventory)))

    def home(self, name):
        return os.path.join(self.root, "machines", name, "home")

    def machine_root(self, name):
        return os.path.join(self.root, "machines", name, "machine_root")

    def settings_path(self, name):
        return os.path.join(self.home(name), ".claude", "settings.json")

    def kind(self, name):
        return KINDS[int(name[1:]) % len(KINDS)]

    def machine_env(self, name, only_fable=False):
        # FABLE_SYSTEM_ROOT: the machine-wide files fable reads (policies under /etc) are the
        # machine's own, empty, never the real /etc.
        mine = dict(HOME=self.home(name), FABLE_HOME=os.path.join(self.home(name), ".fable"),
                    FABLE_SYSTEM_ROOT=self.machine_root(name),
                    GIT_CONFIG_GLOBAL=self.gitconfig, GIT_CONFIG_NOSYSTEM="1")
        return mine if only_fable else dict(self.env, **mine)

    def run(self, argv, env=None, check=True, cwd=None):
        p = subprocess.run(argv, cwd=cwd or self.root, env=env or self.env, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=3600)
        if check and p.returncode != 0:
            die("%s exited %d" % (" ".join(argv), p.returncode), p.stdout)
        return p

    def fable_json(self, name, *args):
        p = subprocess.run([self.fable] + list(args) + ["--json"], cwd=self.home(name),
                           env=self.machine_env(name), text=True, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=300)
        try:
            return json.loads(p.stdout)
        except ValueError:
            die("%s: fable %s printed no JSON (exit %d)" % (name, " ".join(args), p.returncode),
                p.stderr)

    def settings(self, name):
        with open(self.settings_path(name)) as f:
            return json.load(f)

    def edit_settings(self, name, edit):
        doc = self.settings(name)
        edit(doc)
        write(self.settings_path(name), json.dumps(doc, indent=2) + "\n")

    def playbook(self, playbook, *flags):
        argv = [os.path.join(BIN, "ansible-playbook"), "-i", self.hosts_file,
                "-e", "@" + self.vars_file, "-f", str(self.forks)] + list(flags) + [playbook]
        start = time.monotonic()
        cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = self.run(argv, check=False)
        took = time.monotonic() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        # CPU of ansible-playbook and everything it waited for (its workers, the modules, fable).
        self.cpu = (after.ru_utime - cpu.ru_utime) + (after.ru_stime - cpu.ru_stime)
        if os.environ.get("FABLE_ANSIBLE_VERBOSE"):
            print(p.stdout)
        recap = {}
        for m in re.finditer(r"^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+"
                             r"failed=(\d+)", p.stdout, re.M):
            recap[m.group(1)] = dict(ok=int(m.group(2)), changed=int(m.group(3)),
                                     unreachable=int(m.group(4)), failed=int(m.group(5)))
        if sorted(recap) != self.names:
            die("%s: the PLAY RECAP names %d hosts, not the %d machines"
                % (os.path.basename(playbook), len(recap), len(self.names)), p.stdout)
        bad = [h for h, r in recap.items() if r["failed"] or r["unreachable"]]
        if p.returncode != 0 or bad:
            die("%s exited %d; failed or unreachable: %s"
                % (os.path.basename(playbook), p.returncode, ", ".join(bad)), p.stdout)
        return recap, took, p.stdout

    def report(self, path):
        """The collection's fleet_report playbook; returns its document and summary lines."""
        _, took, out = self.playbook("fable.fable.fleet_report",
                                     "-e", "fable_report_hosts=fleet",
                                     "-e", "fable_report_path=" + path)
        with open(path) as f:
            doc = json.load(f)
        if "fable fleet report: %d machines" % len(self.names) not in out:
            die("the report playbook printed no summary", out)
        text = out[out.index("fable fleet report:"):]
        text = [line.strip().strip('",') for line in text.split("\n")]
        summary = []
        for line in text:
            if line.startswith("]"):
                break
            summary.append(line.replace('\\"', '"'))
        return doc, summary, took


def seed(fleet):
    """The drift: stale machines applied at team v1, then team moves to v2; the others after."""
    def apply(name):
        env = fleet.machine_env(name)
        write(os.path.join(env["FABLE_HOME"], "fleet.toml"), fleet.inventory)
        fleet.run([fleet.fable, "apply", "--json"], env=env, cwd=fleet.home(name))

    def hand(name):
        kind = fleet.kind(name)
        if kind == "edited":
            def edit(doc):
                for entry in doc["hooks"]["PreToolUse"]:
                    for hook in entry["hooks"]:
                        if "hooks/check.sh" in hook["command"] and " team" in hook["command"]:
                            hook["command"] += " --edited"
                            return
                die("%s: no wired command of the team source to edit" % name)
            fleet.edit_settings(name, edit)
        elif kind in ("foreign", "stale+high-risk"):
            command = "echo mine" if kind == "foreign" else HIGH_RISK
            event = "Stop" if kind == "foreign" else "SessionStart"
            fleet.edit_settings(name, lambda doc: doc.setdefault("hooks", {}).setdefault(
                event, []).append({"hooks": [{"type": "command", "command": command}]}))

    stale = [n for n in fleet.names if fleet.kind(n).startswith("stale")]
    later = [n for n in fleet.names if fleet.kind(n) in ("edited", "foreign")]
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(apply, stale))
        make_source(fleet.team, "team", "v2")
        list(pool.map(apply, later))
    for name in fleet.names:
        hand(name)


def expected_before(fleet, name):
    kind = fleet.kind(name)
    return dict(never="not_installed", foreign="current").get(kind, "not_current")


def check_report(fleet, doc, after):
    n = len(fleet.names)
    machines = doc.get("machines", {})
    if sorted(machines) != fleet.names:
        die("the report names %d machines, not %d" % (len(machines), n), json.dumps(doc)[:3000])
    for name, m in sorted(machines.items()):
        kind = fleet.kind(name)
        want = "current" if after else expected_before(fleet, name)
        if m.get("state") != want:
            die("report: %s (%s) is %s, not %s" % (name, kind, m.get("state"), want),
                json.dumps(m, indent=1))
        not_current = sorted((s["key"], s["state"]) for s in m["not_current"])
        want_nc = [] if after else {
            "never": [], "foreign": [], "stale": [("team", "stale_but_stable")],
            "stale+high-risk": [("team", "stale_but_stable")],
            "edited": [("team", "half_applied")]}[kind]
        if not_current != want_nc:
            die("report: %s (%s): sources not current %s, not %s"
                % (name, kind, not_current, want_nc), json.dumps(m, indent=1))
        foreign = sorted(r["command"] for r in m["foreign"])
        want_foreign = {"foreign": ["echo mine"], "stale+high-risk": [HIGH_RISK]}.get(kind, [])
        if foreign != want_foreign:
            die("report: %s (%s): foreign %s, not %s" % (name, kind, foreign, want_foreign))
        high = [r["command"] for r in m["high_risk"]]
        if high != ([HIGH_RISK] if kind == "stale+high-risk" else []):
            die("report: %s (%s): high risk %s" % (name, kind, high))
        if m["inert"]:
            die("report: %s: inert entries where status reports none: %s" % (name, m["inert"]))
    s = doc["summary"]
    count = dict((k, sum(1 for x in fleet.names if fleet.kind(x) == k)) for k in KINDS)
    if after:
        want_states = dict(current=n)
    else:
        want_states = dict(current=count["foreign"], not_installed=count["never"],
                           not_current=count["stale"] + count["edited"] + count["stale+high-risk"])
    got_states = dict((k, v) for k, v in s["by_state"].items() if v)
    if got_states != dict((k, v) for k, v in want_states.items() if v):
        die("report: machines by state %s, not %s" % (got_states, want_states))
    if s["foreign"] != count["foreign"] + count["stale+high-risk"] \
            or s["high_risk"] != count["stale+high-risk"]:
        die("report: %d foreign and %d high-risk entries" % (s["foreign"], s["high_risk"]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--machines", type=int, default=100)
    parser.add_argument("--forks", type=int, default=10)
    parser.add_argument("--keep", action="store_true", help="keep the sandbox")
    args = parser.parse_args()
    if args.machines < len(KINDS):
        die("--machines must be at least %d (one of each kind of drift)" % len(KINDS))
    fable = os.environ.get("FABLE_BIN")
    if not fable or not os.access(fable, os.X_OK):
        die("set FABLE_BIN to the fable binary (cargo build: target/debug/fable)")
    fleet = Fleet(os.path.abspath(fable), args.machines, args.forks)
    try:
        scenario(fleet)
    finally:
        if args.keep or os.environ.get("FABLE_ANSIBLE_KEEP"):
            print("fleet: sandbox kept in %s" % fleet.root)
        else:
            shutil.rmtree(fleet.root, ignore_errors=True)


def scenario(fleet):
    n = len(fleet.names)
    seed(fleet)
    site = os.path.join(HERE, "fleet_site.yml")

    doc, summary, took = fleet.report(os.path.join(fleet.root, "report-before.json"))
    check_report(fleet, doc, after=False)
    print("fleet: %d machines seeded; the report before the first run (%.1f s):" % (n, took))
    for line in summary:
        print("fleet:   " + line)

    recap, first, out = fleet.playbook(site)
    first_cpu = fleet.cpu
    for name, r in sorted(recap.items()):
        if (r["changed"] == 0) != (fleet.kind(name) == "foreign"):
            die("first run: %s (%s) changed=%d" % (name, fleet.kind(name), r["changed"]), out)
    for name in fleet.names:
        status = fleet.fable_json(name, "status")
        states = sorted((s["key"], s["state"]) for s in status.get("sources", []))
        if not status.get("current") or states != [("security", "current"), ("team", "current")]:
            die("after the first run %s (%s) is not current: %s"
                % (name, fleet.kind(name), states), json.dumps(status, indent=1)[:4000])
        text = json.dumps(fleet.settings(name))
        if "--edited" in text or "sources/team/" not in text or '"mine": true' not in text:
            die("after the first run %s's settings: %s" % (name, text[:3000]))
        want = {"foreign": "echo mine", "stale+high-risk": HIGH_RISK}.get(fleet.kind(name))
        if want and want not in text:
            die("the first run removed %s's own hook %r" % (name, want))
    print("fleet: first run: %d machines converged in %.1f s (forks %d; unchanged: the %d "
          "converged ones)" % (n, first, fleet.forks,
                               sum(1 for x in fleet.names if fleet.kind(x) == "foreign")))

    recap, second, out = fleet.playbook(site)
    second_cpu = fleet.cpu
    changed = [h for h, r in recap.items() if r["changed"]]
    if changed:
        die("second run: changed on %s" % ", ".join(sorted(changed)), out)
    print("fleet: second run: changed=0 on all %d machines in %.1f s" % (n, second))

    doc, summary, took = fleet.report(os.path.join(fleet.root, "fleet-report.json"))
    check_report(fleet, doc, after=True)
    print("fleet: the report after (%.1f s):" % took)
    for line in summary:
        print("fleet:   " + line)
    print("fleet: %d machines, forks %d: first run %.1f s (CPU %.1f s), second run %.1f s "
          "(CPU %.1f s, changed=0), report %.1f s (CPU %.1f s); load average %.1f"
          % (n, fleet.forks, first, first_cpu, second, second_cpu, took, fleet.cpu,
             os.getloadavg()[0]))


if __name__ == "__main__":
    main()
