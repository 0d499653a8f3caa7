// fable: written by fable for source "default": `fable install` rewrites this file and `fable uninstall` removes it.
// It runs the commands below for Kilo's events with a JSON payload on stdin;
// a block (exit 2, or {"decision": "block"}) is thrown before a tool call.
import { spawn } from "node:child_process";

const FABLE = {
  "source": "default",
  "hooks": {
    "session.created": [
      {
        "command": "\"$FABLE_HOME/sources/default/current/bin/fable-hook\" session-start --host kilo",
        "timeout": 10
      }
    ],
    "tool.execute.before": [
      {
        "command": "\"$FABLE_HOME/sources/default/current/bin/fable-hook\" pre-tool-use --host kilo",
        "timeout": 10
      }
    ],
    "tool.execute.after": [
      {
        "command": "\"$FABLE_HOME/sources/default/current/bin/fable-hook\" post-tool-use --host kilo",
        "timeout": 10
      }
    ],
    "session.idle": [
      {
        "command": "\"$FABLE_HOME/sources/default/current/bin/fable-hook\" stop --host kilo",
        "timeout": 10
      }
    ]
  }
};

const RETRIED = new Set();
const STARTED = new Set();

function matches(matcher, tool) {
  if (!matcher || matcher === "*") return true;
  try {
    return new RegExp(`^(?:${matcher})$`).test(tool);
  } catch {
    return matcher === tool;
  }
}

// The command's answer: {block: reason} or {context: text} or null (allow; also every error).
function answer(code, stdout, stderr) {
  if (code === 2) return { block: stderr.trim() || "blocked by a fable hook" };
  if (code !== 0) return null;
  let doc;
  try {
    doc = JSON.parse(stdout);
  } catch {
    return null;
  }
  if (!doc || typeof doc !== "object") return null;
  if (doc.decision === "block" || doc.permissionDecision === "deny") {
    return { block: String(doc.reason ?? doc.permissionDecisionReason ?? "blocked by a fable hook") };
  }
  if (typeof doc.additionalContext === "string") return { context: doc.additionalContext };
  return null;
}

function run(entry, payload, cwd) {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn("/bin/sh", ["-c", entry.command], { cwd, stdio: ["pipe", "pipe", "pipe"] });
    } catch {
      resolve(null);
      return;
    }
    let out = "";
    let err = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), (entry.timeout ?? 60) * 1000);
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", () => {
      clearTimeout(timer);
      resolve(null);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve(answer(code, out, err));
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

// Runs the event's entries in order; the first block wins, contexts are joined.
async function fire(event, payload, cwd, tool) {
  const context = [];
  for (const entry of FABLE.hooks[event] ?? []) {
    if (tool !== undefined && !matches(entry.matcher, tool)) continue;
    const a = await run(entry, { hook_event_name: event, cwd, ...payload }, cwd);
    if (a?.block) return { block: a.block };
    if (a?.context) context.push(a.context);
  }
  return context.length ? { context: context.join("\n") } : null;
}

export const FablePlugin = async ({ client, directory }) => ({
  "tool.execute.before": async (input, output) => {
    const a = await fire("tool.execute.before", {
      session_id: input.sessionID,
      tool_name: input.tool,
      tool_input: output.args,
      tool_use_id: input.callID,
    }, directory, input.tool);
    if (a?.block) throw new Error(a.block);
  },
  "tool.execute.after": async (input, output) => {
    const response = { title: output.title, output: output.output };
    if (typeof output.metadata?.exit === "number") response.exit_code = output.metadata.exit;
    const a = await fire("tool.execute.after", {
      session_id: input.sessionID,
      tool_name: input.tool,
      tool_input: input.args,
      tool_response: response,
      tool_use_id: input.callID,
    }, directory, input.tool);
    const text = a?.block ?? a?.context;
    if (text && typeof output.output === "string") output.output += `\n\n${text}`;
  },
  // SessionStart: at the session's first message (awaited, unlike session.created), its
  // context appended to that message's text.
  "chat.message": async (input, output) => {
    const id = input.sessionID;
    if (!id || STARTED.has(id)) return;
    STARTED.add(id);
    const a = await fire("session.created", { session_id: id, source: "startup" }, directory);
    const part = output.parts?.find((p) => p.type === "text" && typeof p.text === "string");
    if (a?.context && part) part.text += `\n\n${a.context}`;
  },
  event: async ({ event }) => {
    const id = event.properties?.sessionID;
    if (event.type === "session.idle") {
      const active = RETRIED.delete(id);
      const a = await fire("session.idle", { session_id: id, stop_hook_active: active }, directory);
      if (a?.block && id) {
        RETRIED.add(id);
        await client.session
          .promptAsync({ path: { id }, body: { parts: [{ type: "text", text: a.block }] } })
          .catch(() => RETRIED.delete(id));
      }
    }
  },
});
