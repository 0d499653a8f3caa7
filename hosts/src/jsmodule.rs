//! The generated JavaScript modules fable owns whole, one per source, for the hosts whose hooks
//! are plugin functions (OpenCode and Kilo Code's `plugins/fable-<key>.js`, pi's
//! `extensions/fable-<key>.ts`): the mark line that says whose file it is, the data line that
//! embeds the wired entries (`{"command", "timeout", "matcher"}` per host event), and the part
//! every such module shares, which runs an event's entries under `/bin/sh -c` with a JSON
//! payload on stdin, kills each at its timeout and fails open on any error. Each host adds its
//! own glue to its events after that part.

use serde_json::{json, Map, Value};

use crate::output::{block_stderr, note, Outcome, Verdict};
use crate::spec::EntrySpec;

/// The first line of every module fable writes, followed by the source's key in JSON.
pub(crate) const MARK: &str = "// fable: written by fable for source ";

/// The line that holds the wired entries: `const FABLE = {json};`.
pub(crate) const DATA: &str = "const FABLE = ";

/// The shared part (after the data line): `matches`, `answer`, `run` and `fire`. No import but
/// Node's `child_process` (which the module's header imports), so it needs no npm install.
pub(crate) const RUNNER: &str = r#"const RETRIED = new Set();
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

"#;

/// One entry as a generated file embeds it (these modules, and Cline's sh scripts).
pub(crate) fn render_entry(entry: &EntrySpec<'_>) -> Value {
    let mut m = Map::new();
    m.insert("command".into(), json!(entry.command));
    if let Some(t) = entry.timeout_secs {
        m.insert("timeout".into(), json!(t));
    }
    if let Some(mt) = entry.matcher.filter(|m| !m.is_empty() && *m != "*") {
        m.insert("matcher".into(), json!(mt));
    }
    Value::Object(m)
}

/// The module of source `key`: the mark line, `header` (comment and import lines, each ending
/// in a newline), the data line, [`RUNNER`], then `glue` (the host's own part).
pub(crate) fn text(
    key: &str,
    header: &str,
    entries: &[(String, Vec<Value>)],
    glue: &str,
) -> String {
    let hooks: Map<String, Value> = entries
        .iter()
        .map(|(e, v)| (e.clone(), Value::Array(v.clone())))
        .collect();
    let data = json!({ "source": key, "hooks": hooks });
    format!(
        "{MARK}{}: `fable install` rewrites this file and `fable uninstall` removes it.\n\
         {header}\n{DATA}{data:#};\n\n{RUNNER}{glue}",
        Value::String(key.to_string())
    )
}

/// The source a module is fable's for: its mark line and its embedded data agree.
pub(crate) fn key(text: &str) -> Option<String> {
    let first = text.lines().next()?.strip_prefix(MARK)?;
    let doc = document(text)?;
    let key = doc.get("source")?.as_str()?;
    first
        .starts_with(&Value::String(key.to_string()).to_string())
        .then(|| key.to_string())
}

/// The data a module embeds.
pub(crate) fn document(text: &str) -> Option<Value> {
    // The pretty-printed object ends at the first `}` in column 0 (JSON strings escape their
    // newlines, and nested braces are indented).
    let start = text.find(&format!("\n{DATA}"))? + 1 + DATA.len();
    let rest = &text[start..];
    let end = rest.find("\n};")? + 2;
    serde_json::from_str(&rest[..end]).ok()
}

/// The evaluator's verdict in the form [`RUNNER`]'s `answer` reads: nothing for an allow,
/// `{"additionalContext"}` for context, `{"decision": "block", "reason"}` for a block (its
/// reason on stderr too).
pub(crate) fn render_verdict(verdict: &Verdict) -> Outcome {
    let doc = |v: Value| Outcome {
        code: 0,
        stdout: format!("{v}\n"),
        stderr: String::new(),
    };
    match verdict {
        Verdict::Allow => Outcome::default(),
        Verdict::Note(n) => note(n),
        Verdict::Context(ctx) => doc(json!({ "additionalContext": ctx })),
        Verdict::Block(reason) => {
            let reason = reason.trim_end();
            let mut out = doc(json!({ "decision": "block", "reason": reason }));
            out.stderr = block_stderr(reason);
            out
        }
    }
}
