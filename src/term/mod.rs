//! The one output module (docs/design.md, "Terminal"): every human line goes through here.
//! stdout carries a command's result (its report, or `--json`); stderr carries everything
//! else (progress, prompts, warnings). Colour, `-q`/`-v`, progress and prompts are decided
//! once, from the global flags and the environment, in [`init`].

pub mod out;
pub mod progress;
pub mod prompt;

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use anstyle::{AnsiColor, Style};

/// `--color`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColorWhen {
    /// Colour when the stream is a terminal, `NO_COLOR` is unset or empty and `TERM` is not `dumb`.
    #[default]
    Auto,
    /// Always colour (even through a pipe).
    Always,
    /// Never colour.
    Never,
}

/// The global flags, accepted before or after the subcommand.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct GlobalArgs {
    /// When to colour the output.
    #[arg(long, value_enum, default_value_t = ColorWhen::Auto, global = true, value_name = "WHEN")]
    pub color: ColorWhen,
    /// Print only errors (and the `--json` document); no progress.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Say more on stderr, even without a terminal: each step with its time, each file read
    /// and written; `-vv` also each parse.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Answer yes to every confirmation (the consent a prompt would ask for).
    #[arg(short = 'y', long, global = true)]
    pub yes: bool,
    /// Never prompt: where consent is needed and no flag gives it, fail with exit code 2.
    #[arg(long, global = true)]
    pub no_input: bool,
    /// Whose hooks: `user` (your profiles, the default) or `machine` (each host's machine tier,
    /// read by every user's agents; as root, store in /var/lib/fable). Env: FABLE_SCOPE.
    #[arg(long, global = true, value_name = "SCOPE", value_parser = ["user", "machine"])]
    pub scope: Option<String>,
    /// Root every machine path (/etc/..., /var/lib/fable) under DIR, for tests and images.
    /// Env: FABLE_SYSTEM_ROOT.
    #[arg(long, global = true, value_name = "DIR")]
    pub root: Option<std::path::PathBuf>,
}

/// A severity or state word's tone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    /// Green: ok, current.
    Good,
    /// Yellow: warn, stale or half applied.
    Warn,
    /// Bold red: error, never migrated.
    Bad,
    /// Cyan: fixed.
    Fixed,
    /// Dimmed: secondary detail.
    Dim,
}

impl Tone {
    fn style(self) -> Style {
        match self {
            Tone::Good => AnsiColor::Green.on_default(),
            Tone::Warn => AnsiColor::Yellow.on_default(),
            Tone::Bad => AnsiColor::Red.on_default().bold(),
            Tone::Fixed => AnsiColor::Cyan.on_default(),
            Tone::Dim => Style::new().dimmed(),
        }
    }

    /// The tone of a doctor label or a source state.
    pub fn of(word: &str) -> Tone {
        match word {
            "ok" | "current" | "unchanged" => Tone::Good,
            "warn" | "stale_but_stable" | "half_applied" | "matches" => Tone::Warn,
            "error" | "never_migrated" => Tone::Bad,
            "fixed" => Tone::Fixed,
            _ => Tone::Dim,
        }
    }
}

/// What this run may print, decided once from the flags and the environment.
#[derive(Debug, Clone)]
pub struct Ui {
    color: ColorWhen,
    color_out: bool,
    color_err: bool,
    quiet: bool,
    verbose: u8,
    yes: bool,
    no_input: bool,
    stdout_tty: bool,
    stderr_tty: bool,
    stdin_tty: bool,
    dumb: bool,
    ci: bool,
}

static UI: OnceLock<Ui> = OnceLock::new();

/// Decides colour, verbosity, progress and prompts for this run (first call wins); with `-v`,
/// the libraries' file reads and writes are logged (`fable_snapshot::trace`).
pub fn init(args: &GlobalArgs) -> &'static Ui {
    let _ = started();
    let ui = UI.get_or_init(|| Ui::from_env(args));
    if ui.verbose() {
        fable_snapshot::trace::set_sink(log_io);
    }
    ui
}

/// When this run started (its first call), for `-v`'s timestamps.
fn started() -> std::time::Instant {
    static START: OnceLock<std::time::Instant> = OnceLock::new();
    *START.get_or_init(std::time::Instant::now)
}

/// A `-v` line on stderr: the time since the run started, then `line`.
pub fn log(line: std::fmt::Arguments<'_>) {
    out::err_line(format_args!(
        "fable: [{:.3}s] {line}",
        started().elapsed().as_secs_f64()
    ));
}

fn log_io(what: fable_snapshot::trace::Io, path: &std::path::Path) {
    if what == fable_snapshot::trace::Io::Parse && ui().verbosity() < 2 {
        return;
    }
    log(format_args!(
        "{} {}",
        what.as_str(),
        crate::cmd::render::tilde(path)
    ));
}

/// This run's [`Ui`] (the defaults when [`init`] was not called, as in unit tests).
pub fn ui() -> &'static Ui {
    UI.get_or_init(|| Ui::from_env(&GlobalArgs::default()))
}

fn env_set(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty())
}

impl Ui {
    fn from_env(args: &GlobalArgs) -> Ui {
        let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
        let no_color = env_set("NO_COLOR");
        let stdout_tty = std::io::stdout().is_terminal();
        let stderr_tty = std::io::stderr().is_terminal();
        let auto = |tty: bool| tty && !no_color && !dumb;
        let (color_out, color_err) = match args.color {
            ColorWhen::Always => (true, true),
            ColorWhen::Never => (false, false),
            ColorWhen::Auto => (auto(stdout_tty), auto(stderr_tty)),
        };
        // indicatif and dialoguer style through `console`: keep it to the same decision.
        dialoguer::console::set_colors_enabled(color_out);
        dialoguer::console::set_colors_enabled_stderr(color_err);
        Ui {
            color: args.color,
            color_out,
            color_err,
            quiet: args.quiet,
            verbose: args.verbose,
            yes: args.yes,
            no_input: args.no_input,
            stdout_tty,
            stderr_tty,
            stdin_tty: std::io::stdin().is_terminal(),
            dumb,
            ci: std::env::var_os("CI").is_some(),
        }
    }

    /// The output flags to hand on to another fable run (the re-run after a self-update).
    pub fn forwarded_args(&self) -> Vec<&'static str> {
        let mut out = match self.color {
            ColorWhen::Auto => vec![],
            ColorWhen::Always => vec!["--color", "always"],
            ColorWhen::Never => vec!["--color", "never"],
        };
        if self.quiet {
            out.push("--quiet");
        }
        out.extend(std::iter::repeat_n("--verbose", usize::from(self.verbose)));
        out
    }

    /// `-q`: only errors and results a script asked for (`--json`).
    pub fn quiet(&self) -> bool {
        self.quiet
    }

    /// `-v` (or more).
    pub fn verbose(&self) -> bool {
        self.verbose > 0
    }

    /// How many `-v` were given.
    pub fn verbosity(&self) -> u8 {
        self.verbose
    }

    /// `--yes`.
    pub fn yes(&self) -> bool {
        self.yes
    }

    /// Whether a progress line may be drawn: stderr is a terminal, `TERM` is not `dumb`, and
    /// neither `--json` nor `-q` was given.
    pub fn progress(&self, json: bool) -> bool {
        self.stderr_tty && !self.dumb && !json && !self.quiet
    }

    /// Whether a prompt may be shown: stdin and stderr are both terminals, `CI` is unset and
    /// neither `--yes`, `--no-input` nor `--json` was given. (dialoguer alone would still
    /// prompt through /dev/tty with stdin redirected.)
    pub fn can_prompt(&self, json: bool) -> bool {
        self.stdin_tty && self.stderr_tty && !self.ci && !self.yes && !self.no_input && !json
    }

    /// Whether stdout is a terminal (tables are aligned for a reader there, tab-separated for
    /// a program otherwise).
    pub fn stdout_tty(&self) -> bool {
        self.stdout_tty
    }

    /// Whether stdout is coloured.
    pub fn color_out(&self) -> bool {
        self.color_out
    }

    /// Rows of cells as lines for stdout: on a terminal, a header and columns aligned two
    /// spaces apart (by characters shown); through a pipe, no header and one tab between cells,
    /// for `cut -f` and `awk -F'\t'`.
    pub fn table(&self, head: &[&str], rows: &[Vec<String>]) -> Vec<String> {
        table(self.stdout_tty, head, rows)
    }

    /// `word` coloured by `tone` for stdout.
    pub fn paint(&self, word: &str, tone: Tone) -> String {
        paint(self.color_out, word, tone)
    }

    /// `word` coloured by `tone` for stderr.
    pub fn paint_err(&self, word: &str, tone: Tone) -> String {
        paint(self.color_err, word, tone)
    }

    /// A line of a command's human report on stdout (silenced by `-q`).
    pub fn say(&self, line: std::fmt::Arguments<'_>) {
        if !self.quiet {
            out::line(line);
        }
    }

    /// A warning or note on stderr (silenced by `-q`).
    pub fn note(&self, line: std::fmt::Arguments<'_>) {
        if !self.quiet {
            out::err_line(line);
        }
    }

    /// An error line on stderr, `fable: ` first (never silenced).
    pub fn error(&self, line: std::fmt::Arguments<'_>) {
        out::err_line(format_args!(
            "{}: {line}",
            self.paint_err("fable", Tone::Bad)
        ));
    }
}

/// Set once Ctrl-C was pressed: the handler is ending the process.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// When Ctrl-C was pressed, never returns: the handler thread is cleaning up and exits with
/// [`EXIT_INTERRUPTED`]; the command's own result (often a failure the interruption caused,
/// such as a killed probe) must not print or win the race to exit first.
pub fn yield_to_interrupt() {
    while INTERRUPTED.load(Ordering::SeqCst) {
        std::thread::park_timeout(std::time::Duration::from_secs(1));
    }
}

/// Exit status of a run ended by Ctrl-C (128 + SIGINT).
pub const EXIT_INTERRUPTED: i32 = 130;

/// On Ctrl-C: kill every running doctor probe's process group (they are not in the
/// terminal's foreground group, so SIGINT does not reach them) and any other child, restore
/// the cursor a progress bar or prompt hid, and exit 130. The handler runs on its own thread,
/// not in signal context.
pub fn on_interrupt() {
    let installed = ctrlc::set_handler(|| {
        INTERRUPTED.store(true, Ordering::SeqCst);
        fable_doctor::probe::interrupt();
        let _ = dialoguer::console::Term::stderr().show_cursor();
        // Children re-parented here (doctor: the subreaper) or started by us.
        fable_doctor::reaper::sweep_children(std::time::Duration::from_millis(500));
        out::err_line(format_args!(""));
        std::process::exit(EXIT_INTERRUPTED);
    });
    // Without a handler Ctrl-C ends the process the default way; nothing else depends on it.
    let _ = installed;
}

/// `word` coloured by `tone` for stdout, with this run's decision.
pub fn paint_out(word: &str, tone: Tone) -> String {
    ui().paint(word, tone)
}

fn table(aligned: bool, head: &[&str], rows: &[Vec<String>]) -> Vec<String> {
    if !aligned {
        return rows.iter().map(|r| r.join("\t")).collect();
    }
    let head: Vec<String> = head.iter().map(|h| h.to_uppercase()).collect();
    let mut widths: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            match widths.get_mut(i) {
                Some(w) => *w = (*w).max(cell.chars().count()),
                None => widths.push(cell.chars().count()),
            }
        }
    }
    let line = |cells: &[String]| {
        let mut out = String::new();
        for (i, cell) in cells.iter().enumerate() {
            out.push_str(cell);
            if i + 1 < cells.len() {
                let pad = widths[i] - cell.chars().count() + 2;
                out.extend(std::iter::repeat_n(' ', pad));
            }
        }
        out
    };
    std::iter::once(line(&head))
        .chain(rows.iter().map(|r| line(r)))
        .collect()
}

fn paint(on: bool, word: &str, tone: Tone) -> String {
    if on {
        let s = tone.style();
        format!("{}{word}{}", s.render(), s.render_reset())
    } else {
        word.to_string()
    }
}

/// A line of a command's human report on stdout (silenced by `-q`).
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => { $crate::term::ui().say(format_args!($($arg)*)) };
}

/// An error line on stderr (`fable: ...`), never silenced.
#[macro_export]
macro_rules! error_line {
    ($($arg:tt)*) => { $crate::term::ui().error(format_args!($($arg)*)) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paint_adds_escapes_only_when_on() {
        assert_eq!(paint(false, "ok", Tone::Good), "ok");
        let on = paint(true, "error", Tone::Bad);
        assert!(on.starts_with('\u{1b}') && on.contains("error"), "{on:?}");
    }

    #[test]
    fn tables_align_on_a_terminal_and_are_tab_separated_otherwise() {
        let rows = vec![
            vec!["claude".to_string(), "~/.claude/settings.json".to_string()],
            vec!["opencode".to_string(), "~/é".to_string()],
        ];
        assert_eq!(
            table(true, &["host", "file"], &rows),
            [
                "HOST      FILE",
                "claude    ~/.claude/settings.json",
                "opencode  ~/é"
            ]
        );
        assert_eq!(
            table(false, &["host", "file"], &rows),
            ["claude\t~/.claude/settings.json", "opencode\t~/é"]
        );
    }

    #[test]
    fn tones_of_words() {
        assert_eq!(Tone::of("ok"), Tone::Good);
        assert_eq!(Tone::of("fixed"), Tone::Fixed);
        assert_eq!(Tone::of("never_migrated"), Tone::Bad);
        assert_eq!(Tone::of("half_applied"), Tone::Warn);
    }
}
