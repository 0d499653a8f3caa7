"""Crush in the end-to-end suite: its pin, its profile, its command line and its wire (OpenAI
Chat Completions with Crush's tool names), kept apart from hosts.py.

`@charmland/crush` is a Go binary: its npm package holds only a postinstall script that
downloads the release archive from GitHub (`install.js`), so it is installed into a prefix of
its own, `target/hosts-e2e/crush`, and a failed download skips Crush alone (one `SKIP crush:
not installed` line), never the shared npm tree. `FABLE_E2E_CRUSH_BIN` names a crush binary to
use instead (a machine that cannot reach the release downloads).

Crush's global config, `$XDG_CONFIG_HOME/crush/crush.json`, holds fable's hooks and the fake
provider: an `openai-compat` provider whose `base_url` is `$FABLE_E2E_CRUSH_BASE_URL`, which
Crush expands from the environment, so the file is written once and each run sets the port in
the environment. `CRUSH_DISABLE_PROVIDER_AUTO_UPDATE` (no provider catalog download) and
`CRUSH_DISABLE_METRICS` are set. The run is `crush run --quiet -m fake/fake-model PROMPT`;
`crush run` approves the session's tool calls itself (non-interactive mode). Crush fires
PreToolUse hooks only, so the suite's PostToolUse, SessionStart and Stop cases do not apply
(run.py: `ONLY_PRE_TOOL_USE`)."""

import json
import os
import subprocess

import fakemodel as fm

HERE = os.path.dirname(os.path.abspath(__file__))
WORK = os.path.join(os.path.dirname(os.path.dirname(HERE)), "target", "hosts-e2e")
PREFIX = os.path.join(WORK, "crush")
PIN = ("@charmland/crush", "0.96.1", "crush")
MODEL = "fake-model"
PROMPT = "do the task"
BIN_VAR = "FABLE_E2E_CRUSH_BIN"


def binary():
    return os.environ.get(BIN_VAR) or os.path.join(PREFIX, "node_modules", *PIN[0].split("/"),
                                                     "bin", "crush")


def installed():
    """True when a runnable crush of the pinned version is in place."""
    try:
        r = subprocess.run([binary(), "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0 and (PIN[1] in r.stdout or bool(os.environ.get(BIN_VAR)))


def ensure(log):
    """Installs the CLI into its own prefix; None, or why it could not."""
    if installed():
        return None
    spec = f"{PIN[0]}@{PIN[1]}"
    log(f"hosts-e2e: npm install {spec} (prefix {PREFIX}; its postinstall downloads the binary)")
    try:
        r = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", PREFIX,
                            "--cache", os.path.join(WORK, "npm-cache"), spec],
                           capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"npm install failed: {e}"
    if r.returncode != 0:
        lines = [ln for ln in r.stderr.splitlines() if ln.startswith("npm error")]
        errors = [ln for ln in lines if "Error:" in ln] or lines
        return "npm install failed: " + (" ".join(" ".join(errors[:1]).split())[:240] or f"exit {r.returncode}")
    if not installed():
        return f"no runnable crush {PIN[1]} after npm install"
    return None


def config_dir(env):
    return os.path.join(env["XDG_CONFIG_HOME"], "crush")


def setup_profile(env):
    """crush.json with the fake provider (fable then adds its hooks to the same file)."""
    d = config_dir(env)
    os.makedirs(d, exist_ok=True)
    cfg = {
        "providers": {"fake": {
            "name": "fake", "type": "openai-compat", "base_url": "$FABLE_E2E_CRUSH_BASE_URL",
            "api_key": "dummy",
            "models": [{"id": MODEL, "name": "fake", "context_window": 200000,
                        "default_max_tokens": 1000}]}},
        "models": {"large": {"model": MODEL, "provider": "fake"},
                   "small": {"model": MODEL, "provider": "fake"}},
        "options": {"disable_provider_auto_update": True, "disable_metrics": True},
    }
    with open(os.path.join(d, "crush.json"), "w") as f:
        json.dump(cfg, f, indent=2)


def command(port):
    """argv and extra environment of one headless turn against the fake model on `port`."""
    argv = [binary(), "run", "--quiet", "-m", f"fake/{MODEL}", PROMPT]
    extra = {"FABLE_E2E_CRUSH_BASE_URL": f"http://127.0.0.1:{port}/v1",
             "CRUSH_DISABLE_PROVIDER_AUTO_UPDATE": "1", "CRUSH_DISABLE_METRICS": "1"}
    return argv, extra


class Wire(fm.ChatCompletions):
    """Crush with an openai-compat provider: POST /v1/chat/completions (stream), its own tool
    names and arguments (`write {file_path, content}`, `view {file_path}`, `bash {command,
    description}`); its title request offers no tools."""

    name = "crush"

    @classmethod
    def is_main(cls, path, body):
        names = cls.names(body)
        return path.split("?")[0].endswith("/chat/completions") and "write" in names \
            and "bash" in names

    @staticmethod
    def step(body):
        msgs = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        first = next((i for i, m in enumerate(msgs) if m.get("role") == "user"), 0)
        return sum(1 for m in msgs[first:] if m.get("role") == "assistant")

    @staticmethod
    def call(action, cwd):
        k = action["kind"]
        if k == "text":
            return None
        if k == "write":
            return "write", {"file_path": f"{cwd}/{action['rel']}", "content": action["content"]}
        if k == "read":
            return "view", {"file_path": f"{cwd}/{action['rel']}"}
        return "bash", {"command": action["cmd"], "description": "scripted command"}


fm.WIRES["crush"] = Wire
