//! `guarded-rm` (seed 004, `enforce-guarded-rm.py`, PreToolUse `Bash`): deny an `rm` in command
//! position whose operand expands an unguarded shell variable (`rm $B/$s/x`, `rm "$f"`). With
//! `B` or `s` empty or unset the path collapses (`rm -rf $B/` is `rm -rf /`), and Claude Code
//! stops the operator with an approval dialog even under bypassPermissions; the deny names the
//! `${VAR:?}` rewrite, so the agent corrects itself. `${VAR:?}`, `${VAR:-literal}`, `$(...)`,
//! special parameters and literal paths are allowed. Named residuals, allowed: a wrapped `rm`
//! (`sudo rm`, `xargs rm`), `git rm`, `find -delete`, heredoc bodies and `case` arms (see
//! [`super::shell`]). Main session and subagents alike. Kill switches:
//! `FABLE_DISABLE_GUARDED_RM=1`, `AE_RM_GUARD_DISABLE=1`.

use serde_json::Value;

use super::{shell, Action, Ctx, Rule, RuleError};
use crate::normalize::Input;
use crate::Event;

/// The rule.
pub struct GuardedRm;

/// The longest command quoted back in the message.
const MAX_QUOTED: usize = 400;

/// The command text of a command tool's input: `command` as a string, or the script of an argv
/// array (its last element, as in `["bash", "-lc", "..."]`).
pub fn command_text(input: &Input) -> Option<&str> {
    if !crate::events::post_tool_use::is_command(input) || input.tool_name.is_none() {
        return None;
    }
    match input.tool_input.get("command")? {
        Value::String(s) => Some(s),
        Value::Array(a) => a.last()?.as_str(),
        _ => None,
    }
}

fn clip(s: &str) -> String {
    if s.chars().count() <= MAX_QUOTED {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(MAX_QUOTED).collect();
    out.push_str(" ...");
    out
}

impl Rule for GuardedRm {
    fn id(&self) -> &'static str {
        "guarded-rm"
    }
    fn event(&self) -> Event {
        Event::PreToolUse
    }
    fn seed_kill_switch(&self) -> Option<&'static str> {
        Some("AE_RM_GUARD_DISABLE")
    }
    fn candidate(&self, input: &Input) -> bool {
        command_text(input).is_some_and(|c| c.contains("rm") && c.contains('$'))
    }
    fn check(&self, ctx: &Ctx<'_>) -> Result<Action, RuleError> {
        let Some(cmd) = command_text(ctx.input) else {
            return Ok(Action::Pass);
        };
        let findings = shell::rm_findings(cmd).map_err(RuleError::Unparsed)?;
        let Some(first) = findings.first() else {
            return Ok(Action::Pass);
        };
        let vars = first
            .names
            .iter()
            .map(|n| format!("${n}"))
            .collect::<Vec<_>>()
            .join(", ");
        let rewrites = findings
            .iter()
            .map(|f| format!("  {}", clip(&f.rewrite)))
            .collect::<Vec<_>>()
            .join("\n");
        Ok(Action::Deny {
            why: "rm operand expands an unguarded variable",
            message: format!(
                "[fable] BLOCKED rm with an unguarded variable: `{}` expands {vars} without a \
                 guard; an empty or unset value collapses the path (e.g. `rm -rf $DIR/` is \
                 `rm -rf /`). Guard each variable with `${{VAR:?}}` (the shell refuses an unset \
                 or empty value) or give a literal default (`${{VAR:-literal}}`), then run it \
                 again:\n{rewrites}",
                clip(&first.original)
            ),
        })
    }
}
