//! One module per lifecycle event. Each handler receives the normalised input and the
//! discovered project and returns a [`Verdict`](crate::output::Verdict).

pub mod control_paths;
pub mod post_tool_use;
pub mod pre_tool_use;
pub mod session_start;
pub mod stop;

/// Formats at most [`MAX_LIST`] items (indented) and "... and N more".
pub fn list(items: &[String], prefix: &str) -> String {
    let mut out = String::new();
    for it in items.iter().take(MAX_LIST) {
        out.push_str("  ");
        out.push_str(prefix);
        out.push_str(it);
        out.push('\n');
    }
    if items.len() > MAX_LIST {
        out.push_str(&format!("  ... and {} more\n", items.len() - MAX_LIST));
    }
    out
}

/// Items listed in messages and context before "... and N more".
pub const MAX_LIST: usize = 12;
