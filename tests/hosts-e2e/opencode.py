"""OpenCode in the end-to-end suite: its pin, its profile, its command line and its wire (Chat
Completions with OpenCode's tool names), kept apart from hosts.py.

OpenCode runs offline against a custom provider (`@ai-sdk/openai-compatible`, which it bundles)
pointing at the fake model, given inline through `OPENCODE_CONFIG_CONTENT`; model fetching,
autoupdate, sharing and LSP downloads are off. fable writes
`$OPENCODE_CONFIG_DIR/plugins/fable-<key>.js`; the harness points `OPENCODE_CONFIG_DIR` at
`$XDG_CONFIG_HOME/opencode`, OpenCode's global config directory, so that one directory is both
(fable's default profile, `~/.config/opencode`, does not follow `XDG_CONFIG_HOME`). With a plugin present OpenCode npm-installs
`@opencode-ai/plugin` into the config directory at startup, which stalls offline; the sandbox's
config directory is seeded so that it finds the package already listed (fable itself writes
nothing but its plugin there)."""

import json
import os

import fakemodel as fm

PIN = ("opencode-ai", "1.18.33", "opencode")
MODEL = "fake-model"
PROMPT = "do the task"


def config_dir(env):
    return os.path.join(env["XDG_CONFIG_HOME"], "opencode")


def setup_profile(env):
    """The profile directory (which `fable install` finds and wires), seeded so that OpenCode's
    startup dependency install has nothing to do offline."""
    d = config_dir(env)
    env["OPENCODE_CONFIG_DIR"] = d
    os.makedirs(os.path.join(d, "node_modules"), exist_ok=True)
    dep = {"@opencode-ai/plugin": PIN[1]}
    with open(os.path.join(d, "package.json"), "w") as f:
        json.dump({"dependencies": dep}, f)
    with open(os.path.join(d, "package-lock.json"), "w") as f:
        json.dump({"name": "opencode", "lockfileVersion": 3, "requires": True,
                   "packages": {"": {"dependencies": dep}}}, f)


def command(bins, port):
    """argv and extra environment of one headless turn against the fake model on `port`."""
    argv = [os.path.join(bins, PIN[2]), "run", "--model", f"fake/{MODEL}", PROMPT]
    config = {
        "autoupdate": False,
        "share": "disabled",
        "model": f"fake/{MODEL}",
        "permission": {"edit": "allow", "bash": "allow", "webfetch": "allow",
                       "external_directory": "allow"},
        "provider": {"fake": {
            "npm": "@ai-sdk/openai-compatible", "name": "fake",
            "options": {"baseURL": f"http://127.0.0.1:{port}/v1", "apiKey": "dummy"},
            "models": {MODEL: {"name": MODEL, "tool_call": True}},
        }},
    }
    extra = {"OPENCODE_CONFIG_CONTENT": json.dumps(config), "OPENCODE_DISABLE_MODELS_FETCH": "1",
             "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
             "OPENCODE_DISABLE_SHARE": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1"}
    return argv, extra


class Wire(fm.ChatCompletions):
    """OpenCode with an openai-compatible provider: POST /v1/chat/completions (stream), its
    own tool names (`bash`, `write`, `read`, `edit`); its title request offers no tools."""

    name = "opencode"

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
            return "write", {"filePath": f"{cwd}/{action['rel']}", "content": action["content"]}
        if k == "read":
            return "read", {"filePath": f"{cwd}/{action['rel']}"}
        return "bash", {"command": action["cmd"], "description": "scripted command"}


fm.WIRES["opencode"] = Wire
