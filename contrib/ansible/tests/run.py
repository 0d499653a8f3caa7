#!/usr/bin/env python3
"""The fable.fable collection against localhost (`-c local`) in a sandbox HOME.

A path source, a git source (a file:// repository pinned by a fleet.lock that `fable sync`
wrote on a "reference machine", then moved on upstream) and the bundled evaluator, applied
by the role: a lock that does not pin the git source is refused before anything is written,
check mode on the fresh machine writes nothing, the first run changes (at the pinned
commit), the second changes nothing, the modules' own checks pass (modules.yml, and
envelope.yml against a stand-in binary), check mode writes nothing under HOME, a source
removed from the inventory is pruned (its wiring gone from ~/.claude/settings.json) and the
run after that changes nothing; without a lock the role follows the ref. Last, with a fable
that has --scope, the role in the machine scope under a system root in the sandbox, and the
fleet report of a user install that a machine policy makes inert.
Run by run.sh (which installs ansible-core into target/ansible-venv); needs FABLE_BIN.
"""

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
COLLECTIONS = os.path.dirname(HERE)  # contrib/ansible, holding ansible_collections/
BIN = os.path.dirname(os.path.abspath(sys.executable))

MANIFEST = {
    "hooks": {
        "PreToolUse": [{
            "matcher": "Bash",
            "hooks": [{"type": "command", "timeout": 10,
                       "command": 'sh "${CLAUDE_PLUGIN_ROOT}/hooks/x.sh" NAME'}],
        }]
    }
}
USER_SETTINGS = {"mine": True, "hooks": {"Stop": [{"hooks": [
    {"type": "command", "command": "echo mine"}]}]}}


def die(message, output=""):
    if output:
        sys.stderr.write(output[-6000:] + "\n")
    sys.stderr.write("ansible: FAILED: %s\n" % message)
    sys.exit(1)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def make_source(directory, name, script="exit 0\n"):
    manifest = json.dumps(MANIFEST, indent=2).replace("NAME", name)
    write(os.path.join(directory, "hooks", "hooks.json"), manifest + "\n")
    write(os.path.join(directory, "hooks", "x.sh"), script)


class Sandbox:
    def __init__(self, fable):
        self.fable = fable
        self.root = tempfile.mkdtemp(prefix="fable-ansible-")
        self.home = os.path.join(self.root, "home")
        self.fable_home = os.path.join(self.home, ".fable")
        gitconfig = os.path.join(self.root, "gitconfig")
        write(gitconfig, "[user]\n\tname = fable test\n\temail = test@example.invalid\n"
              "[init]\n\tdefaultBranch = main\n[protocol \"file\"]\n\tallow = always\n")
        ansible_cfg = os.path.join(self.root, "ansible.cfg")
        write(ansible_cfg, "[defaults]\n")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANSIBLE_", "FABLE_", "GIT_", "XDG_", "CLAUDE", "CODEX",
                                    "GEMINI", "QWEN", "CURSOR"))}
        env.update(
            HOME=self.home,
            FABLE_HOME=self.fable_home,
            GIT_CONFIG_GLOBAL=gitconfig,
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
            ANSIBLE_LOCALHOST_WARNING="0",
            ANSIBLE_INVENTORY_UNPARSED_WARNING="0",
        )
        self.env = env
        os.makedirs(os.path.join(self.home, ".claude"))
        write(os.path.join(self.home, ".claude", "settings.json"),
              json.dumps(USER_SETTINGS, indent=2) + "\n")

    def run(self, argv, cwd=None, env=None, check=True):
        p = subprocess.run(argv, cwd=cwd or self.root, env=env or self.env, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
        if check and p.returncode != 0:
            die("%s exited %d" % (" ".join(argv), p.returncode), p.stdout)
        return p

    def git(self, repo, *args):
        return self.run(["git", "-C", repo] + list(args)).stdout.strip()

    def playbook(self, name, extra, *flags, fails=False, env=None):
        vars_file = os.path.join(self.root, "vars.json")
        write(vars_file, json.dumps(dict(dict(fable_bin=self.fable,
                                              ansible_python_interpreter=sys.executable),
                                         **extra)))
        argv = [os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local",
                "-e", "@" + vars_file] + list(flags) + [os.path.join(HERE, name)
                                                         if name.endswith(".yml") else name]
        p = self.run(argv, check=not fails, env=env)
        out = p.stdout
        if os.environ.get("FABLE_ANSIBLE_VERBOSE"):
            print(out)
        recap = re.search(r"^localhost\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+"
                          r"failed=(\d+)", out, re.M)
        if not recap:
            die("no PLAY RECAP for localhost in the output of %s" % name, out)
        if fails:
            if p.returncode == 0 or not int(recap.group(4)):
                die("%s did not fail" % name, out)
        elif int(recap.group(4)) or int(recap.group(3)):
            die("%s: a task failed" % name, out)
        return int(recap.group(2)), out

    def listing(self):
        """Every path under HOME with its type, mode, size and mtime (check mode compares)."""
        out = {}
        for top, dirs, files in os.walk(self.home):
            for name in dirs + files:
                path = os.path.join(top, name)
                st = os.lstat(path)
                out[os.path.relpath(path, self.home)] = (st.st_mode, st.st_size, st.st_mtime_ns)
        st = os.lstat(self.home)
        out["."] = (st.st_mode, st.st_size, st.st_mtime_ns)
        return out

    def settings(self):
        with open(os.path.join(self.home, ".claude", "settings.json")) as f:
            return f.read()


def inventory(box, sources):
    text = "# the team's machines\nschema = 1\n\n"
    for s in sources:
        text += {
            "local": '[[source]]\nname = "local"\npath = "%s"\n\n' % box.local,
            "team": '[[source]]\nname = "team"\ngit = "file://%s"\nref = "main"\n\n'
                    % box.upstream,
            "default": '[[source]]\nname = "default"\nbuiltin = true\n\n',
        }[s]
    return text


def unchanged_home(box, before, out):
    after = box.listing()
    if before != after:
        moved = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        die("check mode wrote under HOME: %s" % ", ".join(moved[:20]), out)


def lock_busy(box):
    """fable_apply against the real binary while this process holds the install lock (a
    flock, as fable takes it); last, since it applies another inventory. Needs a fable that
    bounds its wait (FABLE_INSTALL_LOCK_WAIT_MS) and exits 5; with an older one the probe
    times out and this is skipped."""
    lock = open(os.path.join(box.fable_home, "lock"), "a")
    release = os.path.join(box.root, "release-lock")
    done = threading.Event()

    def let_go():
        # Hold the lock until the playbook asks, then a little longer, so the retries retry.
        while not done.is_set() and not os.path.exists(release):
            time.sleep(0.1)
        time.sleep(1.5)
        fcntl.flock(lock, fcntl.LOCK_UN)

    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        # Something to do (a converged apply takes no lock): the path source back.
        inv_file = os.path.join(box.root, "lockbusy.toml")
        write(inv_file, inventory(box, ["local", "default"]))
        try:
            probe = subprocess.run([box.fable, "apply", "-f", inv_file, "--json"], timeout=10,
                                   env=dict(box.env, FABLE_INSTALL_LOCK_WAIT_MS="0"),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except subprocess.TimeoutExpired:
            probe = None
        if probe is None or probe.returncode != 5:
            print("ansible: busy install lock: skipped (this fable does not exit 5 at once with "
                  "FABLE_INSTALL_LOCK_WAIT_MS=0)")
            return
        thread = threading.Thread(target=let_go)
        thread.start()
        try:
            box.playbook("lockbusy.yml", dict(inventory=inv_file, release=release))
        finally:
            done.set()
            thread.join()
    finally:
        lock.close()
    if "sources/local/" not in box.settings():
        die("the apply retried after the busy lock did not install the path source")
    print("ansible: busy install lock: exit 5 without retries, applied with them")


def machine_scope(box):
    """The role in the machine scope against the real binary, its system root in the sandbox
    (machine_root): the first run installs into <root>/var/lib/fable and Claude Code's
    managed-settings.d, the second changes nothing. Then a user's install that a machine policy
    (allowManagedHooksOnly) stops: the fleet report names the machine inert, with the reason.
    Skipped with a line for a fable without --scope."""
    root = os.path.join(box.root, "machine-root")
    home = os.path.join(box.root, "machine-user")
    os.makedirs(os.path.join(root, "etc", "claude-code"))
    os.makedirs(os.path.join(home, ".claude"))
    write(os.path.join(home, ".claude", "settings.json"), "{}\n")
    env = dict(box.env, HOME=home, FABLE_HOME=os.path.join(home, ".fable"),
               FABLE_SYSTEM_ROOT=root)
    probe = subprocess.run([box.fable, "--scope", "machine", "status", "--json"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    if probe.returncode != 0:
        print("ansible: machine scope against fable: skipped (this fable has no --scope machine)")
        return
    inventory = ('schema = 1\n\n[defaults]\nscope = "machine"\n\n[[source]]\nname = "team"\n'
                 'path = "%s"\n' % box.local)
    extra = dict(fable_inventory=inventory, fable_scope="machine", fable_machine_root=root)
    changed, out = box.playbook("site.yml", extra, env=env)
    drop_in = os.path.join(root, "etc", "claude-code", "managed-settings.d", "fable.json")
    store = os.path.join(root, "var", "lib", "fable")
    if changed == 0 or not os.path.isfile(os.path.join(store, "fleet.toml")) \
            or not os.path.isfile(drop_in) or store + "/sources/team/" not in open(drop_in).read():
        die("the machine scope's first run did not install into %s" % root, out)
    if os.path.exists(os.path.join(home, ".fable")) or open(
            os.path.join(home, ".claude", "settings.json")).read() != "{}\n":
        die("the machine scope's run wrote into the user's home", out)
    changed, out = box.playbook("site.yml", extra, env=env)
    if changed:
        die("the machine scope's second run changed %d task(s)" % changed, out)
    # A user's install that the machine's policy keeps from running.
    write(os.path.join(root, "etc", "claude-code", "managed-settings.json"),
          '{"allowManagedHooksOnly": true}\n')
    user_inv = os.path.join(home, "fleet.toml")
    write(user_inv, inventory.replace('scope = "machine"', 'scope = "user"'))
    box.run([box.fable, "apply", "-f", user_inv, "--json"], env=env)
    report = os.path.join(box.root, "machine-report.json")
    box.playbook("fable.fable.fleet_report", dict(fable_report_path=report), env=env)
    with open(report) as f:
        machine = json.load(f)["machines"]["localhost"]
    if machine.get("state") != "inert" or len(machine.get("inert", [])) != 1 \
            or "allowManagedHooksOnly" not in (machine["inert"][0].get("reason") or "") \
            or not machine["inert"][0].get("fix"):
        die("the report does not name the machine inert with the policy:\n%s"
            % json.dumps(machine, indent=1))
    print("ansible: machine scope against fable: installed under the system root, the next run "
          "changed=0; a user install a policy stops: the report says inert (%s)"
          % machine["inert"][0]["reason"].split(" in ")[0])


def main():
    fable = os.environ.get("FABLE_BIN")
    if not fable or not os.access(fable, os.X_OK):
        die("set FABLE_BIN to the fable binary (cargo build: target/debug/fable)")
    fable = os.path.abspath(fable)
    box = Sandbox(fable)
    try:
        scenario(box)
    finally:
        if os.environ.get("FABLE_ANSIBLE_KEEP"):
            print("ansible: sandbox kept in %s" % box.root)
        else:
            shutil.rmtree(box.root, ignore_errors=True)


def scenario(box):
    box.local = os.path.join(box.root, "local-hooks")
    make_source(box.local, "local")
    box.upstream = os.path.join(box.root, "upstream")
    make_source(box.upstream, "team")
    box.git(box.root, "init", "-q", box.upstream)
    box.git(box.upstream, "add", ".")
    box.git(box.upstream, "commit", "-q", "-m", "one")
    pinned = box.git(box.upstream, "rev-parse", "HEAD")

    # The reference machine: `fable sync` there writes the lock the playbook ships.
    ref_home = os.path.join(box.root, "reference")
    ref_env = dict(box.env, HOME=ref_home, FABLE_HOME=os.path.join(ref_home, ".fable"))
    os.makedirs(os.path.join(ref_home, ".claude"))
    full = inventory(box, ["local", "team", "default"])
    ref_inv = os.path.join(ref_home, "fleet.toml")
    write(ref_inv, full)
    box.run([box.fable, "sync", "-f", ref_inv, "--json"], env=ref_env)
    with open(os.path.join(ref_home, "fleet.lock")) as f:
        lock = f.read()
    if pinned not in lock:
        die("the reference lock does not pin %s:\n%s" % (pinned, lock))
    # Upstream moves on: the managed machine must still get the pinned commit.
    make_source(box.upstream, "team", "exit 0 # newer\n")
    box.git(box.upstream, "commit", "-q", "-am", "two")

    # A lock that does not pin the inventory's git source is refused before anything runs.
    before = box.listing()
    _, out = box.playbook("site.yml", dict(fable_inventory=full, fable_lock="schema = 1\n"),
                          fails=True)
    if "git source team (file://%s main) is not pinned in the lock" % box.upstream not in out:
        die("a lock without the git source's pin was not refused clearly", out)
    unchanged_home(box, before, out)
    print("ansible: a lock without the git source's pin: refused, nothing written")

    extra = dict(fable_inventory=full, fable_lock=lock)
    # Check mode on a machine fable never touched: planned, nothing written.
    before = box.listing()
    changed, out = box.playbook("site.yml", extra, "--check", "--diff")
    unchanged_home(box, before, out)
    if changed == 0 or "would fetch and check out the git sources" not in out \
            or '+ref = "%s"' % pinned not in out:
        die("check mode on a fresh machine planned nothing", out)
    print("ansible: check mode on a fresh machine: changed=%d, nothing under HOME written"
          % changed)

    changed, out = box.playbook("site.yml", extra, "--diff")
    if changed == 0:
        die("the first run changed nothing", out)
    for needle in ("+name = \"team\"", "    add /hooks/SessionStart",
                   "source local: patch " + os.path.join(box.home, ".claude", "settings.json")):
        if needle not in out:
            die("the first run's diff lacks %r" % needle, out)
    settings = box.settings()
    for needle in ("sources/local/", "sources/team/", "fable-hook", '"mine": true', "echo mine"):
        if needle not in settings:
            die("after the first run ~/.claude/settings.json lacks %r:\n%s" % (needle, settings))
    with open(os.path.join(box.fable_home, "fleet.lock")) as f:
        host_lock = f.read()
    if pinned not in host_lock:
        die("the host's lock does not pin the playbook's commit %s:\n%s" % (pinned, host_lock))
    with open(os.path.join(box.fable_home, "checkouts", "team", "hooks", "x.sh")) as f:
        if "newer" in f.read():
            die("the git source was checked out at upstream's tip, not at the pinned commit")
    print("ansible: first run: changed=%d, the pinned commit %s applied" % (changed, pinned[:12]))

    changed, out = box.playbook("site.yml", extra)
    if changed:
        die("the second run changed %d task(s)" % changed, out)
    print("ansible: second run: changed=0")

    changed, out = box.playbook("modules.yml", dict(expected_keys=["default", "local", "team"]))
    if changed:
        die("modules.yml changed %d task(s)" % changed, out)
    print("ansible: fable_status facts and fable_apply check mode and errors: ok")

    fake = os.path.join(HERE, "fake_fable.py")
    changed, out = box.playbook("envelope.yml", dict(sandbox=box.root, fake_fable=fake,
                                                     fable_bin=fake))
    print("ansible: the JSON envelope, error.message and the retry on exit code 5: ok")
    print("ansible: scope machine and machine_root on fable's command line (modules, role, "
          "report), the report's inert and high-risk entries: ok")

    # Remove the path source: check mode plans the prune and writes nothing.
    extra = dict(fable_inventory=inventory(box, ["team", "default"]), fable_lock=lock)
    before = box.listing()
    changed, out = box.playbook("site.yml", extra, "--check", "--diff")
    unchanged_home(box, before, out)
    if changed == 0 or "source local: would prune" not in out:
        die("check mode did not plan pruning the removed source", out)
    print("ansible: check mode: changed=%d, the prune planned, nothing under HOME written"
          % changed)

    changed, out = box.playbook("site.yml", extra)
    settings = box.settings()
    if changed == 0 or "sources/local/" in settings:
        die("the removed source was not pruned (changed=%d):\n%s" % (changed, settings), out)
    for needle in ("sources/team/", "fable-hook", '"mine": true'):
        if needle not in settings:
            die("pruning removed more than the source: %r is gone:\n%s" % (needle, settings))
    if os.path.exists(os.path.join(box.fable_home, "sources", "local")):
        die("the pruned source's snapshots are still in $FABLE_HOME/sources/local")
    changed, out = box.playbook("site.yml", extra)
    if changed:
        die("the run after the prune changed %d task(s)" % changed, out)
    print("ansible: prune: the removed source's wiring is gone; the next run: changed=0")

    # Without a lock the role follows the inventory's ref: upstream's newer commit.
    tip = box.git(box.upstream, "rev-parse", "HEAD")
    extra = dict(extra, fable_lock="")
    changed, out = box.playbook("site.yml", extra)
    with open(os.path.join(box.fable_home, "checkouts", "team", "hooks", "x.sh")) as f:
        if changed == 0 or "newer" not in f.read():
            die("without a lock the git source did not move to its ref's tip", out)
    with open(os.path.join(box.fable_home, "fleet.lock")) as f:
        if tip not in f.read():
            die("without a lock the host's lock does not pin the ref's tip %s" % tip)
    changed, out = box.playbook("site.yml", extra)
    if changed:
        die("the second run without a lock changed %d task(s)" % changed, out)
    print("ansible: without a lock: the ref's tip %s applied; the next run: changed=0" % tip[:12])

    lock_busy(box)
    machine_scope(box)


if __name__ == "__main__":
    main()
