//! Progress on stderr with indicatif, only where [`super::Ui::progress`] allows it: a spinner
//! for a long step that appears only after [`DELAY`] (a no-op install stays silent), one line
//! per running doctor probe with its elapsed time, one line per `apply` source, and the bytes
//! of the update download. Everything here draws nothing when progress is not allowed.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::ui;

/// How long a step runs before its progress appears.
pub const DELAY: Duration = Duration::from_millis(250);
const TICK: Duration = Duration::from_millis(100);

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
        .with_key(
            "secs",
            |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.1}s", s.elapsed().as_secs_f64());
            },
        )
}

/// A target drawn on stderr only once [`DELAY`] has passed; dropping it before then means
/// nothing was ever drawn.
struct Delayed {
    stop: Option<mpsc::Sender<()>>,
    timer: Option<thread::JoinHandle<()>>,
}

impl Delayed {
    /// Calls `show` after [`DELAY`] unless dropped first.
    fn start(show: impl FnOnce() + Send + 'static) -> Delayed {
        let (tx, rx) = mpsc::channel::<()>();
        let timer = thread::Builder::new()
            .name("fable-progress".into())
            .spawn(move || {
                if let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(DELAY) {
                    show();
                }
            })
            .ok();
        Delayed {
            stop: Some(tx),
            timer,
        }
    }
}

impl Drop for Delayed {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.timer.take() {
            let _ = t.join();
        }
    }
}

/// A spinner with a message, shown after [`DELAY`] on a terminal; inert otherwise.
pub struct Spinner {
    bar: ProgressBar,
    delayed: Option<Delayed>,
    /// With `-v`: the step running and since when, to log its time when it ends.
    step: Mutex<Option<(String, std::time::Instant)>>,
}

impl Spinner {
    /// Starts a spinner for `message` (`json`: the command prints a JSON document).
    pub fn start(message: impl Into<String>, json: bool) -> Spinner {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        bar.set_style(style("{spinner} {msg} {secs}"));
        bar.set_message(message.into());
        let delayed = ui().progress(json).then(|| {
            let b = bar.clone();
            Delayed::start(move || {
                b.set_draw_target(ProgressDrawTarget::stderr());
                b.enable_steady_tick(TICK);
            })
        });
        Spinner {
            bar,
            delayed,
            step: Mutex::new(None),
        }
    }

    /// With `-v`: logs how long the step that is ending took.
    fn end_step(&self) {
        let mut step = self.step.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((what, since)) = step.take() {
            self.log(&format!("{what}: {:.3}s", since.elapsed().as_secs_f64()));
        }
    }

    /// A `-v` line: above the spinner once it is drawn; plainly before that (or without a
    /// terminal).
    fn log(&self, line: &str) {
        let line = crate::cmd::words::tilde_text(line);
        if self.bar.is_hidden() {
            super::log(format_args!("{line}"));
        } else {
            self.bar.println(line);
        }
    }

    /// Replaces the message.
    pub fn set_message(&self, message: impl Into<String>) {
        self.bar.set_message(message.into());
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        if ui().verbose() {
            self.end_step();
        }
        drop(self.delayed.take());
        self.bar.finish_and_clear();
    }
}

impl fable_installer::Progress for Spinner {
    fn step(&self, what: &str) {
        self.set_message(what.to_string());
        if ui().verbose() {
            self.end_step();
            self.log(what);
            let mut step = self.step.lock().unwrap_or_else(|e| e.into_inner());
            *step = Some((what.to_string(), std::time::Instant::now()));
        }
    }
}

/// One line per running doctor probe, with its elapsed time.
pub struct ProbeLines {
    multi: MultiProgress,
    bars: Mutex<Vec<Option<ProgressBar>>>,
    delayed: Mutex<Option<Delayed>>,
    draw: bool,
}

impl ProbeLines {
    /// The lines for a doctor run (`json`: `--json` was given).
    pub fn new(json: bool) -> Arc<ProbeLines> {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::hidden());
        let draw = ui().progress(json);
        let delayed = draw.then(|| {
            let m = multi.clone();
            Delayed::start(move || m.set_draw_target(ProgressDrawTarget::stderr()))
        });
        Arc::new(ProbeLines {
            multi,
            bars: Mutex::new(Vec::new()),
            delayed: Mutex::new(delayed),
            draw,
        })
    }
}

impl fable_doctor::ProbeObserver for ProbeLines {
    fn started(&self, index: usize, spec: &fable_doctor::ProbeSpec) {
        if !self.draw {
            return;
        }
        let bar = self.multi.add(ProgressBar::new_spinner());
        bar.set_style(style("{spinner} probe {msg} {secs}"));
        bar.set_message(format!("{} {}", spec.host, spec.event));
        bar.enable_steady_tick(TICK);
        let mut bars = self.bars.lock().unwrap_or_else(|e| e.into_inner());
        if bars.len() <= index {
            bars.resize(index + 1, None);
        }
        bars[index] = Some(bar);
    }

    fn finished(
        &self,
        index: usize,
        spec: &fable_doctor::ProbeSpec,
        result: &fable_doctor::ProbeResult,
    ) {
        if ui().verbose() {
            let line = format!(
                "probe {} {}: {:.2}s, exit {}",
                spec.host,
                spec.event,
                result.latency.as_secs_f64(),
                result
                    .exit_code
                    .map_or_else(|| "none".to_string(), |c| c.to_string())
            );
            if self.draw {
                let _ = self.multi.println(line);
            } else {
                super::log(format_args!("{line}"));
            }
        }
        let mut bars = self.bars.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(bar) = bars.get_mut(index).and_then(Option::take) {
            bar.finish_and_clear();
            self.multi.remove(&bar);
        }
    }
}

impl Drop for ProbeLines {
    fn drop(&mut self) {
        drop(
            self.delayed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take(),
        );
        let _ = self.multi.clear();
    }
}

/// The bytes of a download as they arrive (total when known), shown after [`DELAY`].
pub struct Bytes {
    bar: ProgressBar,
    delayed: Option<Delayed>,
}

impl Bytes {
    /// A bar for downloading `what` (`total`: its size when known).
    pub fn start(what: &str, total: Option<u64>, json: bool) -> Bytes {
        let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::hidden());
        let template = if total.is_some() {
            "{spinner} {msg} {bytes}/{total_bytes} {wide_bar} {secs}"
        } else {
            "{spinner} {msg} {bytes} {secs}"
        };
        bar.set_style(style(template));
        bar.set_message(what.to_string());
        let delayed = ui().progress(json).then(|| {
            let b = bar.clone();
            Delayed::start(move || {
                b.set_draw_target(ProgressDrawTarget::stderr());
                b.enable_steady_tick(TICK);
            })
        });
        Bytes { bar, delayed }
    }

    /// `n` more bytes arrived.
    pub fn add(&self, n: u64) {
        self.bar.inc(n);
    }
}

impl Drop for Bytes {
    fn drop(&mut self) {
        drop(self.delayed.take());
        self.bar.finish_and_clear();
    }
}
