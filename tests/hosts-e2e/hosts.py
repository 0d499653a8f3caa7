"""Per-host setup and command lines for the real CLIs (Claude Code, Codex CLI, Gemini CLI,
Qwen Code, Factory Droid; Cline in cline.py, Copilot CLI in copilot.py, OpenCode in opencode.py, Kimi Code in
kimi.py, Crush in crush.py, pi in pi.py)."""

import json
import os
import select
import subprocess
import time

import cline
import copilot
import crush
import kimi
import kilo
import opencode
import pi

PINNED = {
    "claude": ("@anthropic-ai/claude-code", "2.1.332", "claude"),
    "codex": ("@openai/codex", "0.171.0", "codex"),
    "gemini": ("@google/gemini-cli", "0.61.0", "gemini"),
    "qwen": ("@qwen-code/qwen-code", "0.24.4", "qwen"),
    "copilot": copilot.PIN,
    "cline": cline.PIN,
    "opencode": opencode.PIN,
    "pi": pi.PIN,
    "kilo": kilo.PIN,
    # Installed with its own Node 22 into a prefix of its own (kimi.py), not the shared tree.
    "kimi": kimi.PIN,
    # Droid's npm wrapper (@factory/cli) downloads this platform package at install time; it is
    # pinned directly (a registry package holding the binary, linux x64 only).
    "droid": ("@factory/cli-linux-x64", "0.225.2", "droid"),
    # Installed into a prefix of its own (crush.py): its postinstall downloads the Go binary.
    "crush": crush.PIN,
}

DROID_MODEL = "fake-model"

QWEN_MODEL = "qwen3-coder-plus"

GEMINI_MODEL = "gemini-2.5-flash"
PROMPT = "do the task"


def setup_profile(host, env):
    """Creates the host's profile directory and the settings the offline run needs (before
    `fable install`, which then wires hooks into them)."""
    home = env["HOME"]
    if host == "cline":
        cline.setup_profile(env)
    elif host == "copilot":
        copilot.setup_profile(env)
    elif host == "opencode":
        opencode.setup_profile(env)
    elif host == "pi":
        pi.setup_profile(env)
    elif host == "kilo":
        kilo.setup_profile(env)
    elif host == "kimi":
        kimi.setup_profile(env)
    elif host == "crush":
        crush.setup_profile(env)
    elif host == "claude":
        os.makedirs(os.path.join(home, ".claude"), exist_ok=True)
        # Skip the first-run screens; -p does not need them, but keep the config quiet.
        with open(os.path.join(home, ".claude.json"), "w") as f:
            json.dump({"hasCompletedOnboarding": True, "autoUpdates": False}, f)
    elif host == "codex":
        os.makedirs(env["CODEX_HOME"], exist_ok=True)
        write_codex_config(env, 1)  # the port is set per run
    elif host == "gemini":
        d = os.path.join(home, ".gemini")
        os.makedirs(d, exist_ok=True)
        settings = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        }
        with open(os.path.join(d, "settings.json"), "w") as f:
            json.dump(settings, f, indent=2)
    elif host == "droid":
        # Hooks live in settings.json, which fable patches; the model is given per run
        # (`droid exec --settings`), so this file is never rewritten after the install.
        d = os.path.join(home, ".factory")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "settings.json"), "w") as f:
            json.dump({"enableTelemetry": False}, f, indent=2)
    elif host == "qwen":
        d = os.path.join(home, ".qwen")
        os.makedirs(d, exist_ok=True)
        settings = {
            "security": {"auth": {"selectedType": "openai"}},
            "model": {"name": QWEN_MODEL},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        }
        with open(os.path.join(d, "settings.json"), "w") as f:
            json.dump(settings, f, indent=2)


CODEX_CONFIG = """# written by tests/hosts-e2e (fake model on loopback)
model = "gpt-5.5"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[analytics]
enabled = false

[otel]
metrics_exporter = "none"

[model_providers.fake]
name = "fake"
base_url = "http://127.0.0.1:{port}/v1"
wire_api = "responses"
env_key = "FAKE_MODEL_API_KEY"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 20000
"""

TRUST_MARK = "# --- hook trust (tests/hosts-e2e) ---\n"


def write_codex_config(env, port):
    """Rewrites config.toml for this run's port, keeping the hook trust below it: the
    harness's own block, or the `[hooks.state."K"]` tables `fable install --trust-codex`
    wrote."""
    path = os.path.join(env["CODEX_HOME"], "config.toml")
    trust = ""
    if os.path.exists(path):
        old = open(path).read()
        if TRUST_MARK in old:
            trust = old[old.index(TRUST_MARK):]
        elif "[hooks.state." in old:
            start = old.index("[hooks.state.")
            trust = old[old.rfind("\n", 0, start) + 1:]
    with open(path, "w") as f:
        f.write(CODEX_CONFIG.format(port=port))
        if trust:
            f.write("\n" + trust)


def command(host, bins, env, port, tmpdir):
    """argv and extra environment of one headless turn against the fake model on `port`."""
    exe = os.path.join(bins, PINNED[host][2])
    if host == "cline":
        return cline.command(bins, env, port)
    if host == "copilot":
        return copilot.command(bins, port)
    if host == "opencode":
        return opencode.command(bins, port)
    if host == "pi":
        return pi.command(bins, env, port)
    if host == "kilo":
        return kilo.command(bins, port)
    if host == "kimi":
        return kimi.command(env, port)
    if host == "crush":
        return crush.command(port)
    if host == "droid":
        # A custom (BYOK) Anthropic model on loopback, in airgap mode: no Factory login.
        runtime = os.path.join(tmpdir, f"droid-runtime-{port}.json")
        with open(runtime, "w") as f:
            json.dump({"customModels": [{
                "model": DROID_MODEL, "displayName": "fake", "provider": "anthropic",
                "baseUrl": f"http://127.0.0.1:{port}", "apiKey": "dummy",
                "maxOutputTokens": 1000}]}, f)
        exe = os.path.join(os.path.dirname(bins), "@factory", "cli-linux-x64", "bin", "droid")
        argv = [exe, "exec", "--skip-permissions-unsafe", "-m", f"custom:{DROID_MODEL}",
                "--settings", runtime, "-o", "json", PROMPT]
        extra = {"FACTORY_AIRGAP_ENABLED": "1", "FACTORY_API_KEY": "dummy",
                 "FACTORY_DISABLE_KEYRING": "1"}
        return argv, extra
    if host == "claude":
        argv = [exe, "-p", PROMPT, "--output-format", "json", "--dangerously-skip-permissions"]
        extra = {"ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}", "ANTHROPIC_API_KEY": "dummy",
                 "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "IS_SANDBOX": "1",
                 "CLAUDE_CODE_TMPDIR": tmpdir, "DISABLE_AUTOUPDATER": "1"}
    elif host == "codex":
        write_codex_config(env, port)
        argv = [exe, "exec", "--skip-git-repo-check", "--json",
                "--disable", "plugins", "--disable", "remote_plugin", "--disable", "apps",
                "--disable", "in_app_updates", "--disable", "plugin_sharing", PROMPT]
        extra = {"FAKE_MODEL_API_KEY": "dummy"}
    elif host == "qwen":
        argv = [exe, "-p", PROMPT, "--yolo", "--output-format", "json"]
        extra = {"OPENAI_API_KEY": "dummy", "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
                 "OPENAI_MODEL": QWEN_MODEL}
    else:
        argv = [exe, "-p", PROMPT, "--output-format", "json", "--yolo", "-m", GEMINI_MODEL]
        extra = {"GEMINI_API_KEY": "dummy", "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{port}",
                 "GEMINI_CLI_TRUST_WORKSPACE": "true", "GEMINI_CLI_NO_RELAUNCH": "true"}
    return argv, extra


# ---------------------------------------------------------------------------------------------
# Codex hook trust


def codex_hooks_list(codex, env, cwds, timeout=20):
    """`codex app-server` over JSON-RPC stdio: initialize, initialized, hooks/list {cwds}.
    Returns the `data` list of hooks/list."""
    p = subprocess.Popen([codex, "-c", "features.plugins=false", "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"clientInfo": {"name": "fable-hosts-e2e", "version": "0.1"}}},
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": list(cwds)}},
    ]
    try:
        for m in msgs:
            p.stdin.write((json.dumps(m) + "\n").encode())
        p.stdin.flush()
        deadline = time.time() + timeout
        buf = b""
        while time.time() < deadline:
            r, _, _ = select.select([p.stdout], [], [], 0.5)
            if not r:
                continue
            chunk = os.read(p.stdout.fileno(), 65536)
            if not chunk:
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if msg.get("id") == 2:
                    if "error" in msg:
                        raise RuntimeError(f"hooks/list failed: {msg['error']}")
                    return msg["result"]["data"]
        raise RuntimeError("codex app-server gave no hooks/list answer")
    finally:
        try:
            os.killpg(p.pid, 9)
        except ProcessLookupError:
            pass
        p.wait()


def toml_str(s):
    return json.dumps(s)  # a TOML basic string is JSON-compatible for these characters


def trust_codex_hooks_via_app_server(codex, env, cwds):
    """Trusts every hook Codex lists for `cwds` by writing
    `[hooks.state."<key>"] trusted_hash = "<currentHash>"` into $CODEX_HOME/config.toml.

    TODO: switch to `fable install --trust-codex` once it exists (run.py already prefers it
    when `fable install --help` mentions it)."""
    data = codex_hooks_list(codex, env, cwds)
    lines, seen = [], set()
    for entry in data:
        for hook in entry.get("hooks") or []:
            key, h = hook.get("key"), hook.get("currentHash")
            if key and h and key not in seen:
                seen.add(key)
                lines.append(f"[hooks.state.{toml_str(key)}]\ntrusted_hash = {toml_str(h)}\n")
    path = os.path.join(env["CODEX_HOME"], "config.toml")
    text = open(path).read()
    if TRUST_MARK in text:
        text = text[:text.index(TRUST_MARK)]
    with open(path, "w") as f:
        f.write(text.rstrip("\n") + "\n\n" + TRUST_MARK + "\n".join(lines))
    return data
