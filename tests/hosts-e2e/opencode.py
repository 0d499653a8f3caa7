"""OpenCode in the end-to-end suite: its pin, its profile, its command line and its wire (Chat
Completions with OpenCode's tool names), kept apart from hosts.py.

OpenCode runs offline against a custom provider (`@ai-sdk/openai-compatible`, which it bundles)
pointing at the fake model, given inline through `OPENCODE_CONFIG_CONTENT`; model fetching,
autoupdate, sharing and LSP downloads are off. fable writes
`$XDG_CONFIG_HOME/opencode/plugins/fable-<key>.js`: the sandbox sets `XDG_CONFIG_HOME` and
leaves `OPENCODE_CONFIG_DIR` unset, so the run proves that fable's default profile is the
directory OpenCode reads (`$XDG_CONFIG_HOME/opencode`, not `~/.config/opencode`). With a plugin present OpenCode npm-installs
`@opencode-ai/plugin` into the config directory at startup, which stalls offline; the sandbox's
config directory is seeded so that it finds the package already listed (fable itself writes
nothing but its plugin there)."""

import json
import os

import fakemodel as fm

PIN = ("opencode-ai", "1.18.33", "opencode")
MODEL = "fake-model"
PROMPT = "do the task"
# A served turn under this machine's load: start-up, up to four model calls, 10 s of quiet.
SERVE_DEADLINE = 150.0


def config_dir(env):
    return os.path.join(env["XDG_CONFIG_HOME"], "opencode")


def setup_profile(env):
    """The profile directory (which `fable install` finds and wires), seeded so that OpenCode's
    startup dependency install has nothing to do offline."""
    d = config_dir(env)
    env.pop("OPENCODE_CONFIG_DIR", None)
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


def run_served(inn, name, proj, script, deadline, max_calls, host="opencode", command=None):
    """One turn through `opencode serve` (POST /session, then /session/{id}/prompt_async),
    ended once the session has been idle for 10 s with no model call: unlike `opencode run`,
    which exits at the first `session.idle`, the server stays up for the continuation prompt
    fable's Stop gate sends. Returns what `Inner.run_cli` returns. `host` and `command` serve
    a fork with the same server API instead (Kilo Code, kilo.py)."""
    command = command or globals()["command"]
    import socket
    import subprocess
    import time
    import urllib.request

    out = {"name": name, "project": proj, "host": host}
    t0 = time.time()
    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        port = sk.getsockname()[1]
    with fm.ModelServer(host, script, proj, max_calls) as srv:
        argv, extra = command(inn.bins, srv.port)
        env = dict(inn.env, **extra)
        so = open(os.path.join(inn.root, f"{name}.stdout"), "w")
        p = subprocess.Popen([argv[0], "serve", "--port", str(port), "--hostname", "127.0.0.1"],
                             cwd=proj, env=env, stdin=subprocess.DEVNULL, stdout=so,
                             stderr=subprocess.STDOUT, start_new_session=True)
        base = f"http://127.0.0.1:{port}"

        def req(method, path, body=None):
            data = None if body is None else json.dumps(body).encode()
            r = urllib.request.Request(base + path, method=method, data=data,
                                       headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(r, timeout=30) as resp:
                text = resp.read().decode()
                return json.loads(text) if text.strip() else None

        killed = None
        try:
            while True:
                try:
                    req("GET", "/session")
                    break
                except OSError:
                    if time.time() - t0 > deadline:
                        raise
                    time.sleep(0.5)
            sid = req("POST", "/session", {})["id"]
            req("POST", f"/session/{sid}/prompt_async", {
                "parts": [{"type": "text", "text": PROMPT}],
                "model": {"providerID": "fake", "modelID": MODEL}})
            quiet_since = None
            while True:
                time.sleep(1)
                if srv.runaway.is_set():
                    killed = f"more than {max_calls} model calls"
                elif time.time() - t0 > deadline:
                    killed = f"deadline {deadline:.0f} s"
                if killed:
                    break
                busy = sid in (req("GET", "/session/status") or {})
                last = max([e["t"] for e in srv.main_calls()] or [t0])
                if busy or time.time() - last < 10:
                    quiet_since = None
                elif quiet_since is None:
                    quiet_since = time.time()
                elif time.time() - quiet_since >= 10:
                    break
        except OSError as e:
            killed = f"{host} serve: {e}"
        finally:
            try:
                os.killpg(p.pid, 9)
            except ProcessLookupError:
                pass
            p.wait()
            so.close()
        out["rc"] = p.returncode
        out["killed"] = killed
        out["seconds"] = round(time.time() - t0, 1)
        out["requests"] = srv.log
    out["stdout"] = open(os.path.join(inn.root, f"{name}.stdout")).read()
    out["stderr"] = ""
    out["dns"] = [q for q in inn.dns.queries if t0 <= q["t"] <= time.time()]
    out["probe"] = inn.probes(proj)
    inn.runs[name] = out
    return out
