"""Kilo Code CLI in the end-to-end suite: its pin, its profile and its command line. Kilo is an
OpenCode fork with OpenCode's plugin API, its `run`/`serve` commands and its tool names, so it
reuses opencode.py's wire and served runs; what differs is its config directory
(`$XDG_CONFIG_HOME/kilo`), its `KILO_*` variables and the package it installs at startup
(`@kilocode/plugin`).

Kilo runs offline against a custom provider (`@ai-sdk/openai-compatible`, bundled) pointing at
the fake model, given inline through `KILO_CONFIG_CONTENT`; Kilo's own gateway provider
(`kilo`, which fetches its models from api.kilo.ai) is disabled, and model fetching,
autoupdate, sharing, session ingest, telemetry and LSP downloads are off. fable writes
`$XDG_CONFIG_HOME/kilo/plugins/fable-<key>.js`: the sandbox sets `XDG_CONFIG_HOME` and leaves
`KILO_CONFIG_DIR` unset, so the run proves that fable's default profile is the directory Kilo
reads. The registry holds no linux-x64 binary for `@kilocode/cli` 7.8.x (its platform packages
stop at 7.7.9, and 7.7.9 has no wrapper), so the pin is 7.7.7, the newest wrapper whose binary
installs."""

import json
import os

import fakemodel as fm
import opencode

PIN = ("@kilocode/cli", "7.7.7", "kilo")
MODEL = opencode.MODEL
PROMPT = opencode.PROMPT
SERVE_DEADLINE = opencode.SERVE_DEADLINE


def config_dir(env):
    return os.path.join(env["XDG_CONFIG_HOME"], "kilo")


def setup_profile(env):
    """The profile directory (which `fable install` finds and wires), seeded so that Kilo's
    background install of `@kilocode/plugin` finds the package already listed."""
    d = config_dir(env)
    env.pop("KILO_CONFIG_DIR", None)
    os.makedirs(os.path.join(d, "node_modules"), exist_ok=True)
    dep = {"@kilocode/plugin": PIN[1]}
    with open(os.path.join(d, "package.json"), "w") as f:
        json.dump({"dependencies": dep}, f)
    with open(os.path.join(d, "package-lock.json"), "w") as f:
        json.dump({"name": "kilo", "lockfileVersion": 3, "requires": True,
                   "packages": {"": {"dependencies": dep}}}, f)


def command(bins, port):
    """argv and extra environment of one headless turn against the fake model on `port`."""
    argv = [os.path.join(bins, PIN[2]), "run", "--auto", "--model", f"fake/{MODEL}", PROMPT]
    config = {
        "autoupdate": False,
        "share": "disabled",
        # Kilo's own gateway provider fetches its model list from api.kilo.ai at every start
        # (KILO_DISABLE_MODELS_FETCH does not cover it); disabled, it is never asked.
        "disabled_providers": ["kilo"],
        "model": f"fake/{MODEL}",
        "permission": {"edit": "allow", "bash": "allow", "webfetch": "allow",
                       "external_directory": "allow"},
        "provider": {"fake": {
            "npm": "@ai-sdk/openai-compatible", "name": "fake",
            "options": {"baseURL": f"http://127.0.0.1:{port}/v1", "apiKey": "dummy"},
            "models": {MODEL: {"name": MODEL, "tool_call": True}},
        }},
    }
    extra = {"KILO_CONFIG_CONTENT": json.dumps(config), "KILO_DISABLE_MODELS_FETCH": "1",
             "KILO_DISABLE_AUTOUPDATE": "1", "KILO_DISABLE_LSP_DOWNLOAD": "1",
             "KILO_DISABLE_SHARE": "1", "KILO_DISABLE_SESSION_INGEST": "1",
             "KILO_TELEMETRY_LEVEL": "off", "KILO_DISABLE_DEFAULT_PLUGINS": "1"}
    return argv, extra


class Wire(opencode.Wire):
    """OpenCode's wire (Chat Completions, tools `bash`, `write`, `read`, `edit`)."""

    name = "kilo"


fm.WIRES["kilo"] = Wire


def run_served(inn, name, proj, script, deadline, max_calls):
    """One turn through `kilo serve`, as `opencode.run_served` runs OpenCode's."""
    return opencode.run_served(inn, name, proj, script, deadline, max_calls, host="kilo",
                               command=command)
