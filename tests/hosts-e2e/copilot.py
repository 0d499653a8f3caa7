"""GitHub Copilot CLI in the end-to-end suite: its pin, its profile, its command line and its
wire (Anthropic Messages with Copilot's tool names), kept apart from hosts.py.

Copilot CLI runs offline with a BYOK provider: `COPILOT_PROVIDER_BASE_URL` (the fake model),
`COPILOT_PROVIDER_TYPE=anthropic`, `COPILOT_PROVIDER_API_KEY=dummy`, `COPILOT_MODEL` and
`COPILOT_OFFLINE=true`; no login. fable writes `$COPILOT_HOME/hooks/fable-<key>.json`."""

import os

import fakemodel as fm

PIN = ("@github/copilot", "1.0.102", "copilot")
MODEL = "claude-sonnet-4.5"
PROMPT = "do the task"


def setup_profile(env):
    """The profile directory (`COPILOT_HOME`, which `fable install` finds and wires)."""
    env["COPILOT_HOME"] = os.path.join(env["HOME"], ".copilot")
    os.makedirs(env["COPILOT_HOME"], exist_ok=True)


def command(bins, port):
    """argv and extra environment of one headless turn against the fake model on `port`."""
    argv = [os.path.join(bins, PIN[2]), "-p", PROMPT, "--allow-all", "--no-auto-update",
            "--no-ask-user", "--output-format", "json"]
    extra = {"COPILOT_PROVIDER_BASE_URL": f"http://127.0.0.1:{port}",
             "COPILOT_PROVIDER_TYPE": "anthropic", "COPILOT_PROVIDER_API_KEY": "dummy",
             "COPILOT_MODEL": MODEL, "COPILOT_OFFLINE": "true"}
    return argv, extra


class Wire(fm.Anthropic):
    """Copilot CLI with `COPILOT_PROVIDER_TYPE=anthropic`: POST /v1/messages (stream), its own
    tool names (`bash`, `view`, `create`, `edit`)."""

    name = "copilot"

    @staticmethod
    def is_main(path, body):
        names = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
        return path.split("?")[0].endswith("/v1/messages") and "create" in names

    @staticmethod
    def block(action, cwd):
        k = action["kind"]
        if k == "text":
            return {"type": "text", "text": action["text"]}, "end_turn"
        if k == "write":
            name, inp = "create", {"path": f"{cwd}/{action['rel']}", "file_text": action["content"]}
        elif k == "read":
            name, inp = "view", {"path": f"{cwd}/{action['rel']}"}
        else:
            name, inp = "bash", {"command": action["cmd"], "description": "scripted command"}
        return {"type": "tool_use", "id": fm.new_id("toolu_"), "name": name, "input": inp}, "tool_use"


fm.WIRES["copilot"] = Wire
