//! Codex's `apply_patch` applied to one file, so that the inertness guard compares its result
//! like an `Edit`'s.
//!
//! The format: `*** Update File: PATH`, then hunks, each opened by a line starting `@@`
//! (optionally followed by a context line to search from); hunk lines start with ` ` (context),
//! `-` (removed) or `+` (added); `*** End of File` marks the end of the file; the next `*** `
//! header ends the file's section. Each hunk's old lines (context and removed) must be found, in
//! order, after the previous hunk; they are replaced by its new lines (context and added). A
//! patch that does not apply, moves the file (`*** Move to:`), or does not update `path` gives
//! `None` (the guard passes: the tool itself refuses a patch that does not apply).

/// One hunk: the lines it replaces and their replacement.
#[derive(Debug, Default)]
struct Hunk<'p> {
    anchor: Option<&'p str>,
    old: Vec<&'p str>,
    new: Vec<&'p str>,
}

/// The hunks of the `*** Update File: path` section of `patch`, or `None` when it has none or
/// the file is moved.
fn section<'p>(patch: &'p str, path: &str) -> Option<Vec<Hunk<'p>>> {
    let mut lines = patch.lines();
    lines.find(|l| l.strip_prefix("*** Update File:").map(str::trim) == Some(path))?;
    let mut hunks: Vec<Hunk<'p>> = Vec::new();
    for l in lines {
        if l.starts_with("*** Move to:") {
            return None;
        }
        if l.starts_with("*** End of File") {
            continue;
        }
        if l.starts_with("*** ") {
            break;
        }
        if let Some(rest) = l.strip_prefix("@@") {
            let anchor = rest.trim();
            hunks.push(Hunk {
                anchor: (!anchor.is_empty()).then_some(anchor),
                ..Hunk::default()
            });
            continue;
        }
        if hunks.is_empty() {
            hunks.push(Hunk::default());
        }
        let Some(h) = hunks.last_mut() else {
            continue;
        };
        match l.chars().next() {
            Some('+') => h.new.push(&l[1..]),
            Some('-') => h.old.push(&l[1..]),
            Some(' ') => {
                h.old.push(&l[1..]);
                h.new.push(&l[1..]);
            }
            // An empty line is an empty context line.
            None => {
                h.old.push("");
                h.new.push("");
            }
            Some(_) => return None,
        }
    }
    (!hunks.is_empty()).then_some(hunks)
}

/// `before` with the patch's section for `path` applied, or `None` (see the module docs).
pub fn apply(patch: &str, path: &str, before: &str) -> Option<String> {
    let hunks = section(patch, path)?;
    let trailing_newline = before.ends_with('\n');
    let mut lines: Vec<String> = before.lines().map(str::to_owned).collect();
    let mut at = 0usize;
    for h in hunks {
        if let Some(anchor) = h.anchor {
            at += lines[at..].iter().position(|l| l.trim() == anchor)? + 1;
        }
        if h.old.is_empty() {
            // Pure addition: at the end of the file, or after the anchor.
            let pos = if h.anchor.is_some() { at } else { lines.len() };
            let new: Vec<String> = h.new.iter().map(|s| (*s).to_owned()).collect();
            let n = new.len();
            lines.splice(pos..pos, new);
            at = pos + n;
            continue;
        }
        let found = (at..=lines.len().saturating_sub(h.old.len())).find(|&i| {
            lines[i..i + h.old.len()]
                .iter()
                .zip(&h.old)
                .all(|(a, b)| a == b)
        })?;
        let new: Vec<String> = h.new.iter().map(|s| (*s).to_owned()).collect();
        let n = new.len();
        lines.splice(found..found + h.old.len(), new);
        at = found + n;
    }
    let mut out = lines.join("\n");
    if trailing_newline {
        out.push('\n');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "const a = (\n  <div>\n    <p>one</p>\n    <p>two</p>\n  </div>\n);\n";

    #[test]
    fn hunks_apply_in_order_or_not_at_all() {
        let patch = "*** Begin Patch\n*** Update File: src/A.tsx\n@@\n   <div>\n-    <p>one</p>\n+    <p data-testid=\"one\">one</p>\n     <p>two</p>\n*** End Patch\n";
        assert_eq!(
            apply(patch, "src/A.tsx", FILE).unwrap(),
            FILE.replace("<p>one", "<p data-testid=\"one\">one")
        );
        assert_eq!(apply(patch, "src/B.tsx", FILE), None, "another file");
        let stale = patch.replace("<p>one</p>\n+", "<p>uno</p>\n+");
        assert_eq!(apply(&stale, "src/A.tsx", FILE), None, "does not apply");
        let moved = patch.replace("*** End Patch", "*** Move to: src/C.tsx\n*** End Patch");
        assert_eq!(apply(&moved, "src/A.tsx", FILE), None, "a move");
        let anchored =
            "*** Update File: src/A.tsx\n@@ <p>one</p>\n-    <p>two</p>\n+    <p>2</p>\n";
        assert_eq!(
            apply(anchored, "src/A.tsx", FILE).unwrap(),
            FILE.replace("two", "2")
        );
        let two = "*** Update File: src/A.tsx\n@@\n-    <p>one</p>\n+    <p>1</p>\n@@\n-    <p>two</p>\n+    <p>2</p>\n*** End of File\n*** End Patch";
        assert_eq!(
            apply(two, "src/A.tsx", FILE).unwrap(),
            FILE.replace("one", "1").replace("two", "2")
        );
    }
}
