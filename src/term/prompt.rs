//! Confirmations with dialoguer, under one rule ([`super::Ui::can_prompt`]): only when stdin
//! and stderr are both terminals, `CI` is unset and neither `--yes`, `--no-input` nor
//! `--json` was given. Without a terminal a command proceeds only where a flag gives consent;
//! otherwise it fails with the usage code (2), naming the flag. Nothing here ever waits on a
//! pipe.

use super::ui;

/// The answer to a confirmation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Go ahead (answered yes, or a flag gave consent).
    Yes,
    /// The user said no (or pressed Esc).
    No,
}

/// Asks `question` on the terminal (default: no). `None` when no prompt may be shown.
fn ask(question: &str, json: bool) -> anyhow::Result<Option<Answer>> {
    if !ui().can_prompt(json) {
        return Ok(None);
    }
    let answer = dialoguer::Confirm::new()
        .with_prompt(question)
        .default(false)
        .interact_opt();
    // dialoguer hides the cursor while it reads a key; make sure it is back on every path.
    let _ = dialoguer::console::Term::stderr().show_cursor();
    match answer {
        Ok(Some(true)) => Ok(Some(Answer::Yes)),
        Ok(Some(false) | None) => Ok(Some(Answer::No)),
        // Ctrl-C while the terminal is in raw mode arrives as an interrupted read, not as
        // SIGINT: end the way the signal would (nothing has been changed yet).
        Err(dialoguer::Error::IO(e)) if e.kind() == std::io::ErrorKind::Interrupted => {
            super::out::err_line(format_args!(""));
            std::process::exit(super::EXIT_INTERRUPTED)
        }
        Err(e) => Err(anyhow::anyhow!("cannot read the answer: {e}")),
    }
}

/// Consent for a destructive step (`what`): given by `flag_given` (or `--yes`), else asked on a
/// terminal, else a usage error naming `flag`.
pub fn require(
    question: &str,
    what: &str,
    json: bool,
    flag_given: bool,
    flag: &str,
) -> anyhow::Result<Answer> {
    if flag_given || ui().yes() {
        return Ok(Answer::Yes);
    }
    match ask(question, json)? {
        Some(answer) => Ok(answer),
        None => Err(fable_installer::Error::Usage(format!(
            "{what} needs confirmation and there is no terminal to ask on: pass {flag}"
        ))
        .into()),
    }
}

/// An extra confirmation on a terminal only: without one (or with `--yes`) the command goes
/// ahead, since the request itself is the consent.
pub fn confirm_on_terminal(question: &str, json: bool) -> anyhow::Result<Answer> {
    if ui().yes() {
        return Ok(Answer::Yes);
    }
    Ok(ask(question, json)?.unwrap_or(Answer::Yes))
}

/// The exit code and message of a declined confirmation.
pub fn declined() -> i32 {
    ui().note(format_args!("fable: not confirmed; nothing was changed"));
    1
}

/// The answer to a choice among several items ([`select`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Picked {
    /// The index of the item chosen.
    Item(usize),
    /// The user pressed Esc or `q`.
    Declined,
    /// No prompt may be shown (no terminal, `--yes`, `--no-input`, `--json`, `CI`): the caller
    /// fails with the usage code, listing the items.
    NoTerminal,
}

/// Asks on a terminal which of `items` to act on (the first highlighted).
pub fn select(question: &str, items: &[String], json: bool) -> anyhow::Result<Picked> {
    if !ui().can_prompt(json) {
        return Ok(Picked::NoTerminal);
    }
    let answer = dialoguer::Select::new()
        .with_prompt(question)
        .items(items)
        .default(0)
        .interact_opt();
    let _ = dialoguer::console::Term::stderr().show_cursor();
    match answer {
        Ok(Some(i)) => Ok(Picked::Item(i)),
        Ok(None) => Ok(Picked::Declined),
        Err(dialoguer::Error::IO(e)) if e.kind() == std::io::ErrorKind::Interrupted => {
            super::out::err_line(format_args!(""));
            std::process::exit(super::EXIT_INTERRUPTED)
        }
        Err(e) => Err(anyhow::anyhow!("cannot read the answer: {e}")),
    }
}
