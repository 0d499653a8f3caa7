"""pi (`@mariozechner/pi-coding-agent`) in the end-to-end suite: its pin, its profile, its command
line and its wire (Chat Completions with pi's tool names), kept apart from hosts.py.

pi runs offline against a custom provider in `~/.pi/agent/models.json` (`openai-completions`
at the fake model), with `PI_OFFLINE=1` (no update checks, no package checks, no telemetry).
fable writes `~/.pi/agent/extensions/fable-<key>.ts`, which pi loads at start-up. pi's
`agent_end` is not awaited, so a blocked stop continues the session with a new user message
once pi is idle; under `pi -p` the process ends before that, so every run here goes through
`pi --mode rpc`, driven by `pi_driver.py`: one prompt, then stdin is closed once the session
has been idle for a few seconds with no new run."""

import json
import os
import sys

import fakemodel as fm

PIN = ("@mariozechner/pi-coding-agent", "0.73.1", "pi")
MODEL = "fake-model"
PROMPT = "do the task"
HERE = os.path.dirname(os.path.abspath(__file__))


def agent_dir(env):
    return os.path.join(env["HOME"], ".pi", "agent")


def setup_profile(env):
    """The agent directory (which `fable install` finds and wires); its extensions directory
    is where fable's generated extension goes."""
    env.pop("PI_CODING_AGENT_DIR", None)
    os.makedirs(os.path.join(agent_dir(env), "extensions"), exist_ok=True)
    with open(os.path.join(agent_dir(env), "settings.json"), "w") as f:
        json.dump({}, f)


def command(bins, env, port):
    """argv and extra environment of one turn against the fake model on `port` (the provider is
    written to models.json for this run's port)."""
    with open(os.path.join(agent_dir(env), "models.json"), "w") as f:
        json.dump({"providers": {"fake": {
            "baseUrl": f"http://127.0.0.1:{port}/v1", "api": "openai-completions", "apiKey": "dummy",
            "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
            "models": [{"id": MODEL}]}}}, f)
    pi = os.path.join(bins, PIN[2])
    argv = [sys.executable, os.path.join(HERE, "pi_driver.py"), pi, "--mode", "rpc",
            "--provider", "fake", "--model", MODEL, "--", PROMPT]
    return argv, {"PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"}


class Wire(fm.ChatCompletions):
    """pi with an openai-completions provider: POST /v1/chat/completions (stream), its own tool
    names (`bash`, `read`, `write`, `edit`, ...), a file target named `path`."""

    name = "pi"

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
            return "write", {"path": f"{cwd}/{action['rel']}", "content": action["content"]}
        if k == "read":
            return "read", {"path": f"{cwd}/{action['rel']}"}
        return "bash", {"command": action["cmd"]}


fm.WIRES["pi"] = Wire
