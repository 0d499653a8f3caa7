//! Cline's payloads ([`cline_lift`]): camelCase, the event as Cline's internal `hookName`
//! (`tool_call`, `tool_result`, `prompt_submit`, ...), the session as `taskId`, the call in
//! `tool_call {id, name, input}` and its result in `tool_result {name, input, output, error}`
//! with `postToolUse.success`, the prompt in `userPromptSubmit.prompt`, and `agent_id` on every
//! payload (the main agent's too: `parent_agent_id` is null there). Lifted into the fields the
//! other hosts use: `hook_event_name` (Cline's hook file name), `session_id`, `tool_name`,
//! `tool_input` (a `run_commands` call's `commands` also joined as `command`, one per line),
//! `tool_response {output, error, success}` (a failed command of the batch is a failure),
//! `prompt`; `agent_id` is dropped for the main agent.

use serde_json::{json, Map, Value};

/// Cline's `hookName` -> the hook file name it runs.
const EVENTS: &[(&str, &str)] = &[
    ("tool_call", "PreToolUse"),
    ("tool_result", "PostToolUse"),
    ("prompt_submit", "UserPromptSubmit"),
    ("agent_start", "TaskStart"),
    ("agent_resume", "TaskResume"),
    ("agent_end", "TaskComplete"),
    ("agent_error", "TaskError"),
    ("agent_abort", "TaskCancel"),
    ("session_shutdown", "SessionShutdown"),
];

/// A Cline payload (`clineVersion`, or a `hookName` of Cline's with `taskId`) with its fields
/// lifted into the other hosts' names; `None` for any other payload.
pub fn cline_lift(m: &Map<String, Value>) -> Option<Map<String, Value>> {
    let hook = m.get("hookName").and_then(Value::as_str);
    let event = hook.and_then(|h| EVENTS.iter().find(|(n, _)| *n == h).map(|(_, e)| *e));
    let cline = m.contains_key("clineVersion") || (event.is_some() && m.contains_key("taskId"));
    if !cline {
        return None;
    }
    let mut out = m.clone();
    let put = |out: &mut Map<String, Value>, k: &str, v: Value| {
        if !out.contains_key(k) {
            out.insert(k.to_owned(), v);
        }
    };
    if let Some(e) = event {
        put(&mut out, "hook_event_name", Value::from(e));
    }
    if let Some(id) = m.get("taskId") {
        put(&mut out, "session_id", id.clone());
    }
    let call = ["tool_call", "tool_result"]
        .iter()
        .find_map(|k| m.get(*k).and_then(Value::as_object));
    if let Some(call) = call {
        if let Some(name) = call.get("name") {
            put(&mut out, "tool_name", name.clone());
        }
        if let Some(input) = call.get("input") {
            put(&mut out, "tool_input", with_command(input));
        }
        if let Some(id) = call.get("id") {
            put(&mut out, "tool_use_id", id.clone());
        }
    }
    if let Some(result) = m.get("tool_result").and_then(Value::as_object) {
        let output = result.get("output").cloned().unwrap_or(Value::Null);
        let success = m
            .get("postToolUse")
            .and_then(|p| p.get("success"))
            .and_then(Value::as_bool)
            .unwrap_or(true)
            && !batch_failed(&output);
        let error = result.get("error").cloned().unwrap_or(Value::Null);
        put(
            &mut out,
            "tool_response",
            json!({ "output": output, "error": error, "success": success }),
        );
    }
    if let Some(p) = m.get("userPromptSubmit").and_then(|u| u.get("prompt")) {
        put(&mut out, "prompt", p.clone());
    }
    if m.get("parent_agent_id").is_none_or(Value::is_null) {
        out.remove("agent_id");
    }
    Some(out)
}

/// A `run_commands` input with its commands also as one `command` string (a command is a
/// string or `{command, args}`).
fn with_command(input: &Value) -> Value {
    let Some(obj) = input.as_object() else {
        return input.clone();
    };
    if obj.contains_key("command") {
        return input.clone();
    }
    let Some(commands) = obj.get("commands") else {
        return input.clone();
    };
    let list: Vec<Value> = match commands {
        Value::Array(a) => a.clone(),
        other => vec![other.clone()],
    };
    let lines: Vec<String> = list
        .iter()
        .filter_map(|c| match c {
            Value::String(s) => Some(s.clone()),
            Value::Object(o) => {
                let cmd = o.get("command")?.as_str()?;
                let args = o.get("args").and_then(Value::as_array);
                let args = args.into_iter().flatten().filter_map(Value::as_str);
                Some(
                    std::iter::once(cmd)
                        .chain(args)
                        .collect::<Vec<_>>()
                        .join(" "),
                )
            }
            _ => None,
        })
        .collect();
    let mut obj = obj.clone();
    obj.insert("command".into(), Value::from(lines.join("\n")));
    Value::Object(obj)
}

/// True when one command of a `run_commands` batch failed (`success: false`).
fn batch_failed(output: &Value) -> bool {
    output.as_array().is_some_and(|a| {
        a.iter()
            .any(|r| r.get("success") == Some(&Value::Bool(false)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn lifts_a_cline_tool_call_and_result() {
        let call = obj(json!({
            "clineVersion": "3.0.65", "hookName": "tool_call", "taskId": "t1",
            "workspaceRoots": ["/w"], "agent_id": "agent_1", "parent_agent_id": null,
            "tool_call": {"id": "c1", "name": "run_commands",
                          "input": {"commands": ["ls", {"command": "git", "args": ["status"]}]}},
            "preToolUse": {"toolName": "run_commands", "parameters": {}}
        }));
        let l = cline_lift(&call).unwrap();
        assert_eq!(l["hook_event_name"], "PreToolUse");
        assert_eq!(l["session_id"], "t1");
        assert_eq!(l["tool_name"], "run_commands");
        assert_eq!(l["tool_input"]["command"], "ls\ngit status");
        assert!(!l.contains_key("agent_id"), "the main agent's call");
        let result = obj(json!({
            "clineVersion": "", "hookName": "tool_result", "taskId": "t1",
            "agent_id": "agent_2", "parent_agent_id": "agent_1",
            "tool_result": {"id": "c1", "name": "run_commands", "input": {"commands": ["false"]},
                            "output": [{"query": "false", "result": "", "success": false}]},
            "postToolUse": {"toolName": "run_commands", "success": true}
        }));
        let l = cline_lift(&result).unwrap();
        assert_eq!(l["tool_response"]["success"], false);
        assert_eq!(l["agent_id"], "agent_2");
        assert!(cline_lift(&obj(json!({"hook_event_name": "PreToolUse"}))).is_none());
    }
}
