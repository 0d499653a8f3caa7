"""Scripted fake model servers (Anthropic Messages, also with Factory Droid's tools, OpenAI
Responses and Chat Completions, Gemini) and a logging DNS.

One `ModelServer` serves one CLI run on 127.0.0.1:<ephemeral port>. It answers every request
from a script of abstract actions (write / read / shell / text), chosen by how many model turns
the request's history already holds, so a retry or an auxiliary request never shifts the
script. Every request is logged (method, path, Host header, body, whether it was a main agent
request, the action answered). Python stdlib only.
"""

import json
import socket
import socketserver
import struct
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


# ---------------------------------------------------------------------------------------------
# Abstract actions


def write(rel, content):
    return {"kind": "write", "rel": rel, "content": content}


def read(rel):
    return {"kind": "read", "rel": rel}


def shell(cmd):
    return {"kind": "shell", "cmd": cmd}


def text(msg="All done.", numbered=False):
    return {"kind": "text", "text": msg, "numbered": numbered}


class Script:
    """Actions by model-turn index; past the end the last action repeats."""

    def __init__(self, actions):
        self.actions = list(actions)

    def action(self, step):
        if not self.actions:
            return text()
        a = self.actions[min(step, len(self.actions) - 1)]
        if a.get("numbered"):  # a different answer each turn (no host loop detector trips)
            a = dict(a, text=f"{a['text']} (answer {step + 1})")
        return a


# ---------------------------------------------------------------------------------------------
# Wire formats


def sse(event, data):
    head = f"event: {event}\n" if event else ""
    return (head + "data: " + json.dumps(data) + "\n\n").encode()


def new_id(prefix):
    return prefix + uuid.uuid4().hex[:16]


class Anthropic:
    """Claude Code: POST /v1/messages (stream), count_tokens, anything else answered minimally."""

    name = "anthropic"

    @staticmethod
    def is_main(path, body):
        tools = body.get("tools") or []
        names = {t.get("name") for t in tools if isinstance(t, dict)}
        return path.split("?")[0].endswith("/v1/messages") and "Write" in names

    @staticmethod
    def step(body):
        return sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")

    @staticmethod
    def tool_names(body):
        return sorted(t.get("name", "?") for t in body.get("tools") or [] if isinstance(t, dict))

    @staticmethod
    def block(action, cwd):
        k = action["kind"]
        if k == "text":
            return {"type": "text", "text": action["text"]}, "end_turn"
        if k == "write":
            name, inp = "Write", {"file_path": f"{cwd}/{action['rel']}", "content": action["content"]}
        elif k == "read":
            name, inp = "Read", {"file_path": f"{cwd}/{action['rel']}"}
        else:
            name, inp = "Bash", {"command": action["cmd"], "description": "scripted command"}
        return {"type": "tool_use", "id": new_id("toolu_"), "name": name, "input": inp}, "tool_use"

    @classmethod
    def respond(cls, h, path, body, action, cwd):
        p = path.split("?")[0]
        if p.endswith("/count_tokens"):
            return h.send_json({"input_tokens": 10})
        if not p.endswith("/v1/messages"):
            return h.send_json({"type": "error", "error": {"type": "not_found_error", "message": p}}, 404)
        block, stop = cls.block(action, cwd)
        model = body.get("model", "claude")
        msg = {"id": new_id("msg_"), "type": "message", "role": "assistant", "model": model,
               "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": {"input_tokens": 10, "output_tokens": 1}}
        if not body.get("stream"):
            msg.update(content=[block], stop_reason=stop)
            return h.send_json(msg)
        out = [sse("message_start", {"type": "message_start", "message": msg})]
        if block["type"] == "text":
            out.append(sse("content_block_start", {"type": "content_block_start", "index": 0,
                                                   "content_block": {"type": "text", "text": ""}}))
            out.append(sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                   "delta": {"type": "text_delta", "text": block["text"]}}))
        else:
            start = dict(block, input={})
            out.append(sse("content_block_start", {"type": "content_block_start", "index": 0,
                                                   "content_block": start}))
            out.append(sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                   "delta": {"type": "input_json_delta",
                                                             "partial_json": json.dumps(block["input"])}}))
        out.append(sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
        out.append(sse("message_delta", {"type": "message_delta",
                                         "delta": {"stop_reason": stop, "stop_sequence": None},
                                         "usage": {"output_tokens": 5}}))
        out.append(sse("message_stop", {"type": "message_stop"}))
        h.send_sse(out)


class Responses:
    """Codex: POST /v1/responses (SSE ending with response.completed)."""

    name = "responses"
    MODEL_ITEMS = ("function_call", "custom_tool_call", "local_shell_call")

    @staticmethod
    def is_main(path, body):
        return path.split("?")[0].endswith("/responses") and bool(body.get("tools"))

    @classmethod
    def step(cls, body):
        n = 0
        for it in body.get("input") or []:
            if not isinstance(it, dict):
                continue
            if it.get("type") in cls.MODEL_ITEMS:
                n += 1
            elif it.get("type") == "message" and it.get("role") == "assistant":
                n += 1
        return n

    @staticmethod
    def tools(body):
        out = {}
        for t in body.get("tools") or []:
            if isinstance(t, dict):
                out[t.get("name") or t.get("type")] = t
        return out

    @classmethod
    def tool_names(cls, body):
        return sorted(f"{n}({t.get('type')})" for n, t in cls.tools(body).items())

    @classmethod
    def item(cls, action, body):
        k = action["kind"]
        tools = cls.tools(body)
        if k == "text":
            return {"type": "message", "role": "assistant", "id": new_id("msg_"), "status": "completed",
                    "content": [{"type": "output_text", "text": action["text"], "annotations": []}]}
        call_id = new_id("call_")
        if k == "write":
            lines = "".join("+" + ln + "\n" for ln in action["content"].splitlines())
            patch = f"*** Begin Patch\n*** Add File: {action['rel']}\n{lines}*** End Patch\n"
            t = tools.get("apply_patch", {})
            if t.get("type") == "function":
                return {"type": "function_call", "id": new_id("fc_"), "call_id": call_id,
                        "name": "apply_patch", "arguments": json.dumps({"input": patch}),
                        "status": "completed"}
            return {"type": "custom_tool_call", "id": new_id("ctc_"), "call_id": call_id,
                    "name": "apply_patch", "input": patch, "status": "completed"}
        cmd = action["cmd"] if k == "shell" else f"cat {action['rel']}"
        if "exec_command" in tools:
            name, args = "exec_command", {"cmd": cmd}
        elif "shell_command" in tools:
            name, args = "shell_command", {"command": cmd}
        else:
            name, args = "shell", {"command": ["bash", "-lc", cmd]}
        return {"type": "function_call", "id": new_id("fc_"), "call_id": call_id, "name": name,
                "arguments": json.dumps(args), "status": "completed"}

    @classmethod
    def respond(cls, h, path, body, action, cwd):
        p = path.split("?")[0]
        if not p.endswith("/responses"):
            if p.endswith("/models"):
                return h.send_json({"object": "list", "data": [], "models": []})
            return h.send_json({"error": {"message": "not found: " + p}}, 404)
        rid = new_id("resp_")
        item = cls.item(action, body)
        base = {"id": rid, "object": "response", "created_at": int(time.time()),
                "model": body.get("model", "gpt-5.5")}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        out = [
            sse("response.created", {"type": "response.created",
                                     "response": dict(base, status="in_progress", output=[])}),
            sse("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                               "item": item}),
            sse("response.output_item.done", {"type": "response.output_item.done", "output_index": 0,
                                              "item": item}),
            sse("response.completed", {"type": "response.completed",
                                       "response": dict(base, status="completed", output=[item],
                                                        usage=usage)}),
        ]
        h.send_sse(out)


class Gemini:
    """Gemini CLI: POST /v1beta/models/<m>:streamGenerateContent?alt=sse (and generateContent)."""

    name = "gemini"

    @staticmethod
    def decls(body):
        names = []
        for t in body.get("tools") or []:
            for d in (t or {}).get("functionDeclarations") or []:
                names.append(d.get("name"))
        return names

    @classmethod
    def is_main(cls, path, body):
        return "GenerateContent" in path and "write_file" in cls.decls(body)

    @staticmethod
    def step(body):
        return sum(1 for c in body.get("contents") or [] if isinstance(c, dict) and c.get("role") == "model")

    @classmethod
    def tool_names(cls, body):
        return sorted(n for n in cls.decls(body) if n)

    @staticmethod
    def part(action, cwd):
        k = action["kind"]
        if k == "text":
            return {"text": action["text"]}
        if k == "write":
            return {"functionCall": {"name": "write_file", "args": {
                "file_path": f"{cwd}/{action['rel']}", "content": action["content"]}}}
        if k == "read":
            return {"functionCall": {"name": "read_file", "args": {"file_path": f"{cwd}/{action['rel']}"}}}
        return {"functionCall": {"name": "run_shell_command", "args": {
            "command": action["cmd"], "description": "scripted command"}}}

    @classmethod
    def respond(cls, h, path, body, action, cwd, main=True):
        p = path.split("?")[0]
        if p.endswith(":countTokens"):
            return h.send_json({"totalTokens": 10})
        if "GenerateContent" not in p:
            return h.send_json({"error": {"code": 404, "message": "not found: " + p}}, 404)
        if main:
            part = cls.part(action, cwd)
        else:
            # An auxiliary call (next-speaker check, router, loop check): JSON when asked for.
            gc = body.get("generationConfig") or body.get("config") or {}
            if "json" in str(gc.get("responseMimeType", "")):
                part = {"text": json.dumps({"reasoning": "the model finished", "next_speaker": "user",
                                            "model_choice": "flash", "complexity_score": 1})}
            else:
                part = {"text": "ok"}
        resp = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP",
                                "index": 0}],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
                "modelVersion": p.rsplit("/", 1)[-1].split(":")[0]}
        if ":streamGenerateContent" in p:
            h.send_sse([("data: " + json.dumps(resp) + "\r\n\r\n").encode()])
        else:
            h.send_json(resp)


class ChatCompletions:
    """Qwen Code (OpenAI auth): POST /v1/chat/completions, streamed as `chat.completion.chunk`
    SSE ending in `data: [DONE]`; Gemini-style tool names (write_file, read_file,
    run_shell_command)."""

    name = "chat"

    @staticmethod
    def names(body):
        out = []
        for t in body.get("tools") or []:
            if isinstance(t, dict):
                out.append((t.get("function") or {}).get("name") or t.get("name"))
        return [n for n in out if n]

    @classmethod
    def is_main(cls, path, body):
        # The managed-memory extractor also offers write_file, but never `agent`.
        names = cls.names(body)
        return path.split("?")[0].endswith("/chat/completions") and "write_file" in names \
            and "agent" in names

    @staticmethod
    def step(body):
        """Assistant turns after the user's prompt. Qwen up to 0.15 opens every history with a
        setup message and a canned "Got it" answer, which is not a model turn; 0.24 merges the
        setup text into the prompt's own message (so a later user message, such as a blocked
        stop's, must not be taken for the prompt)."""
        msgs = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        users = [i for i, m in enumerate(msgs) if m.get("role") == "user"]
        if not users:
            return 0
        start = users[0]
        setup = "We are setting up the context" in json.dumps(msgs[start].get("content"))
        canned = (start + 1 < len(msgs) and msgs[start + 1].get("role") == "assistant"
                  and not msgs[start + 1].get("tool_calls")
                  and "Got it" in json.dumps(msgs[start + 1].get("content")))
        if setup and canned:
            start += 2
        return sum(1 for m in msgs[start:] if m.get("role") == "assistant")

    @classmethod
    def tool_names(cls, body):
        return sorted(cls.names(body))

    @staticmethod
    def call(action, cwd):
        """(name, arguments) of a tool call, or None for a text answer."""
        k = action["kind"]
        if k == "text":
            return None
        if k == "write":
            return "write_file", {"file_path": f"{cwd}/{action['rel']}", "content": action["content"]}
        if k == "read":
            return "read_file", {"file_path": f"{cwd}/{action['rel']}"}
        return "run_shell_command", {"command": action["cmd"], "is_background": False,
                                     "description": "scripted command"}

    @classmethod
    def respond(cls, h, path, body, action, cwd, main=True):
        p = path.split("?")[0]
        if p.endswith("/models"):
            return h.send_json({"object": "list", "data": [{"id": body.get("model", "qwen3-coder-plus"),
                                                            "object": "model"}]})
        if not p.endswith("/chat/completions"):
            return h.send_json({"error": {"message": "not found: " + p}}, 404)
        model = body.get("model", "qwen3-coder-plus")
        call = cls.call(action, cwd) if main else None
        text_ = action["text"] if main and call is None else "ok"
        if not main and "json" in json.dumps(body.get("response_format") or {}):
            text_ = json.dumps({"reasoning": "the model finished", "next_speaker": "user"})
        if call:
            delta = {"role": "assistant", "content": None, "tool_calls": [{
                "index": 0, "id": new_id("call_"), "type": "function",
                "function": {"name": call[0], "arguments": json.dumps(call[1])}}]}
            finish = "tool_calls"
        else:
            delta, finish = {"role": "assistant", "content": text_}, "stop"
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        base = {"id": new_id("chatcmpl-"), "object": "chat.completion.chunk",
                "created": int(time.time()), "model": model}
        if not body.get("stream"):
            msg = {k: v for k, v in delta.items() if k != "tool_calls" or call}
            for tc in msg.get("tool_calls") or []:
                tc.pop("index", None)
            return h.send_json(dict(base, object="chat.completion", usage=usage, choices=[
                {"index": 0, "message": msg, "finish_reason": finish}]))
        out = [
            ("data: " + json.dumps(dict(base, choices=[{"index": 0, "delta": delta,
                                                        "finish_reason": None}])) + "\n\n").encode(),
            ("data: " + json.dumps(dict(base, choices=[{"index": 0, "delta": {},
                                                        "finish_reason": finish}])) + "\n\n").encode(),
            ("data: " + json.dumps(dict(base, choices=[], usage=usage)) + "\n\n").encode(),
            b"data: [DONE]\n\n",
        ]
        h.send_sse(out)


class DroidMessages(Anthropic):
    """Factory Droid with a custom Anthropic model: Anthropic Messages with Droid's tools
    (`Create`, `Read`, `Execute`; `Execute` requires a `summary`)."""

    name = "anthropic-droid"

    @staticmethod
    def is_main(path, body):
        tools = body.get("tools") or []
        names = {t.get("name") for t in tools if isinstance(t, dict)}
        return path.split("?")[0].endswith("/v1/messages") and "Execute" in names

    @staticmethod
    def block(action, cwd):
        k = action["kind"]
        if k == "text":
            return {"type": "text", "text": action["text"]}, "end_turn"
        if k == "write":
            name, inp = "Create", {"file_path": f"{cwd}/{action['rel']}", "content": action["content"]}
        elif k == "read":
            name, inp = "Read", {"file_path": f"{cwd}/{action['rel']}"}
        else:
            name, inp = "Execute", {"command": action["cmd"], "summary": "Run the scripted command now"}
        return {"type": "tool_use", "id": new_id("toolu_"), "name": name, "input": inp}, "tool_use"


class ClineChat(ChatCompletions):
    """Cline CLI with an OpenAI-compatible provider: Chat Completions with Cline's tools
    (`editor {path, new_text}`, `read_files {files: [{path}]}`, `run_commands {commands}`)."""

    name = "chat-cline"

    @classmethod
    def is_main(cls, path, body):
        return path.split("?")[0].endswith("/chat/completions") and "run_commands" in cls.names(body)

    @staticmethod
    def step(body):
        msgs = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        users = [i for i, m in enumerate(msgs) if m.get("role") == "user"]
        if not users:
            return 0
        return sum(1 for m in msgs[users[0]:] if m.get("role") == "assistant")

    @staticmethod
    def call(action, cwd):
        k = action["kind"]
        if k == "text":
            return None
        if k == "write":
            return "editor", {"path": f"{cwd}/{action['rel']}", "new_text": action["content"]}
        if k == "read":
            return "read_files", {"files": [{"path": f"{cwd}/{action['rel']}"}]}
        return "run_commands", {"commands": [action["cmd"]]}


WIRES = {"claude": Anthropic, "codex": Responses, "gemini": Gemini, "qwen": ChatCompletions,
         "droid": DroidMessages, "cline": ClineChat}


# ---------------------------------------------------------------------------------------------
# The HTTP server


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):  # quiet
        pass

    def send_json(self, obj, code=200):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def send_sse(self, chunks):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")  # no length: the close ends the body
        self.end_headers()
        for c in chunks:
            self.wfile.write(c)
            self.wfile.flush()
        self.close_connection = True

    def _handle(self):
        srv = self.server.owner
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        if not isinstance(body, dict):
            body = {}
        srv.handle(self, self.command, self.path, dict(self.headers), body, raw)

    do_POST = _handle
    do_GET = _handle
    do_PUT = _handle
    do_DELETE = _handle


class ModelServer:
    """A fake model for one CLI run."""

    def __init__(self, host, script, cwd, max_main_calls=30):
        self.wire = WIRES[host]
        self.script = script
        self.cwd = cwd
        self.max_main_calls = max_main_calls
        self.log = []
        self.lock = threading.Lock()
        self.runaway = threading.Event()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.owner = self
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *a):
        self.httpd.shutdown()
        self.httpd.server_close()

    def main_calls(self):
        with self.lock:
            return [e for e in self.log if e["main"]]

    def handle(self, h, method, path, headers, body, raw):
        main = method == "POST" and self.wire.is_main(path, body)
        entry = {"t": time.time(), "method": method, "path": path, "host": headers.get("Host"),
                 "peer": h.client_address[0], "main": main, "body": body,
                 "raw": raw.decode("utf-8", "replace") if not body else None}
        with self.lock:
            self.log.append(entry)
            calls = sum(1 for e in self.log if e["main"])
        if main and calls > self.max_main_calls:
            self.runaway.set()
            entry["answer"] = "runaway: refused"
            return h.send_json({"error": {"message": "harness limit of model calls reached"}}, 500)
        step = self.wire.step(body) if main else None
        action = self.script.action(step) if main else text("ok")
        entry["step"] = step
        entry["answer"] = action
        if main:
            entry["tools"] = self.wire.tool_names(body)
        try:
            if self.wire in (Gemini, ChatCompletions, ClineChat):
                self.wire.respond(h, path, body, action, self.cwd, main=main)
            else:
                self.wire.respond(h, path, body, action, self.cwd)
        except (BrokenPipeError, ConnectionResetError):
            entry["answer_error"] = "client closed"


# ---------------------------------------------------------------------------------------------
# A DNS server on 127.0.0.1:53 that logs every question and answers NXDOMAIN (fails fast).


class DnsLog:
    def __init__(self):
        self.queries = []
        self.lock = threading.Lock()
        self.servers = []

    @staticmethod
    def _qname(data):
        labels, i = [], 12
        while i < len(data) and data[i]:
            ln = data[i]
            labels.append(data[i + 1:i + 1 + ln].decode("ascii", "replace"))
            i += 1 + ln
        qtype = struct.unpack(">H", data[i + 1:i + 3])[0] if i + 3 <= len(data) else 0
        return ".".join(labels), qtype, i + 5

    def answer(self, data):
        name, qtype, end = self._qname(data)
        with self.lock:
            self.queries.append({"t": time.time(), "name": name, "qtype": qtype})
        flags = 0x8183  # response, recursion desired+available, NXDOMAIN
        return data[:2] + struct.pack(">HHHHH", flags, 1, 0, 0, 0) + data[12:end]

    def start(self, host="127.0.0.1", port=53):
        log = self

        class Udp(socketserver.BaseRequestHandler):
            def handle(self):
                data, sock = self.request
                if len(data) >= 12:
                    sock.sendto(log.answer(data), self.client_address)

        class Tcp(socketserver.BaseRequestHandler):
            def handle(self):
                head = self.request.recv(2)
                if len(head) < 2:
                    return
                data = self.request.recv(struct.unpack(">H", head)[0])
                if len(data) >= 12:
                    out = log.answer(data)
                    self.request.sendall(struct.pack(">H", len(out)) + out)

        socketserver.ThreadingUDPServer.allow_reuse_address = True
        socketserver.ThreadingTCPServer.allow_reuse_address = True
        for cls, handler in ((socketserver.ThreadingUDPServer, Udp), (socketserver.ThreadingTCPServer, Tcp)):
            s = cls((host, port), handler)
            s.daemon_threads = True
            threading.Thread(target=s.serve_forever, daemon=True).start()
            self.servers.append(s)
        return self

    def stop(self):
        for s in self.servers:
            s.shutdown()
            s.server_close()


def port_free(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False
