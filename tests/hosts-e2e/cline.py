"""Cline CLI in the end-to-end suite: its pin, its profile, its command line (the wire is
`fakemodel.ClineChat`), kept apart from hosts.py.

`cline` (npm) is a Node wrapper around a platform binary (`@cline/cli-linux-x64`, a Bun
executable holding `@cline/core`); the pin names the wrapper, which pulls the binary in as an
optional dependency. It runs offline with an OpenAI-compatible provider (`-P openai-compatible`)
pointing at the fake model, written per run into `~/.cline/data/settings/providers.json` (what
`cline auth -p openai-compatible -k .. -m .. -b ..` writes; without `updatedAt` Cline drops the
file as invalid). No Cline account is needed. A run
also starts Cline's hub daemon (`cline --cline-hub-daemon`), which leaves the run's process
group and outlives it: `reap_hub` ends the ones this sandbox started, by pid."""

import json
import os
import signal

PIN = ("cline", "3.0.65", "cline")
MODEL = "fake-model"
PROMPT = "do the task"


def setup_profile(env):
    """The profile directory `fable install` finds (`$HOME/.cline`), with telemetry (PostHog
    at data.cline.bot, OpenTelemetry at otel.cline.bot) and auto-update off."""
    d = os.path.join(env["HOME"], ".cline", "data", "settings")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "global-settings.json"), "w") as f:
        json.dump({"telemetryOptOut": True, "autoUpdateEnabled": False}, f)


def command(bins, env, port):
    """argv and extra environment of one headless turn against the fake model on `port`."""
    path = os.path.join(env["HOME"], ".cline", "data", "settings", "providers.json")
    with open(path, "w") as f:
        json.dump({"version": 1, "lastUsedProvider": "openai-compatible", "modes": {},
                   "providers": {"openai-compatible": {"settings": {
                       "provider": "openai-compatible", "apiKey": "dummy", "model": MODEL,
                       "baseUrl": f"http://127.0.0.1:{port}/v1"},
                       "updatedAt": "2026-01-01T00:00:00.000Z", "tokenSource": "manual"}}}, f)
    argv = [os.path.join(bins, PIN[2]), "--json", "-P", "openai-compatible", "-m", MODEL, PROMPT]
    # E2E_TEST: Cline's only switch for its PostHog feature-flag poll (data.cline.bot), which
    # telemetryOptOut leaves on; the binary reads it nowhere else.
    return argv, {"CLINE_NO_AUTO_UPDATE": "1", "E2E_TEST": "true"}


def cancelled(home, proj, mark):
    """True when Cline's log records a task stopped by a hook (`ControlledStopError`) whose
    reason holds `mark` and names `proj`: Cline's `--json` output does not print the reason."""
    path = os.path.join(home, ".cline", "data", "logs", "cline.log")
    try:
        lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    except OSError:
        return False
    return any("ControlledStopError" in ln and mark in ln and proj in ln for ln in lines)


def reap_hub(root):
    """Ends the hub daemons started under `root` (their `--cwd` lies in it)."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        words = [a.decode("utf-8", "replace") for a in argv]
        if "--cline-hub-daemon" in words and any(w.startswith(root) for w in words):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
