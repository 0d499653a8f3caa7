//! Derived findings folded under their root cause.
//!
//! One broken source produces many findings: a deleted snapshot leaves `current` dangling
//! (`source.current`), makes the source `never_migrated` (`source.state`), every wired entry
//! refers to a missing file (`profile.missing_file`, once per entry and host) and no entry can
//! be probed (`probe.*`). Shown side by side they read as a dozen problems, with advice for the
//! derived ones ("run the command by hand") that is wrong: one repair of the root fixes all of
//! them. [`fold`] moves those findings into the root's [`Finding::consequences`], so the report
//! has one error per root cause, whose fix is the root's.

use crate::finding::{Finding, Severity};

/// Findings that are a root cause when they are errors about one source: its snapshot is gone
/// (`current` dangling or naming a deleted generation) or was never made.
const ROOTS: &[&str] = &["source.current", "source.missing"];

/// Checks whose problems follow from a missing snapshot of the same source, and which the
/// root's repair (a re-sync and re-patch of that source) clears.
fn is_derived(id: &str) -> bool {
    matches!(
        id,
        "source.state" | "source.generation" | "profile.missing_file" | "profile.plan"
    ) || id.starts_with("probe.")
}

/// Folds every problem that follows from a root cause into that root's consequences (their
/// fix becomes the root's). A deleted snapshot that `--fix` repairs says `fable doctor --fix`. Findings
/// about other sources, `ok` findings and unrelated checks (timeouts, hand edits, trust) stay
/// where they are.
pub fn fold(findings: Vec<Finding>) -> Vec<Finding> {
    let is_root = |f: &Finding| {
        f.severity == Severity::Error && f.source.is_some() && ROOTS.contains(&f.id.as_str())
    };
    let roots: Vec<String> = findings
        .iter()
        .filter(|f| is_root(f))
        .filter_map(|f| f.source.clone())
        .collect();
    if roots.is_empty() {
        return findings;
    }
    let mut out: Vec<Finding> = Vec::with_capacity(findings.len());
    let mut derived: Vec<Finding> = Vec::new();
    for f in findings {
        let follows = !is_root(&f)
            && f.severity != Severity::Ok
            && is_derived(&f.id)
            && f.source.as_ref().is_some_and(|s| roots.contains(s));
        if follows {
            derived.push(f);
        } else {
            out.push(f);
        }
    }
    for root in out.iter_mut().filter(|f| is_root(f)) {
        // A deleted snapshot is repaired by `--fix` whatever else could repair it; an
        // inventory source without one keeps its remedy (`fable apply` for a fleet).
        if root.action.is_some() && root.id == "source.current" {
            root.fix = Some("fable doctor --fix".into());
        }
        let (mine, rest): (Vec<Finding>, Vec<Finding>) =
            derived.into_iter().partition(|d| d.source == root.source);
        derived = rest;
        for mut d in mine {
            d.fix.clone_from(&root.fix);
            d.fixed |= root.fixed;
            root.consequences.push(d);
        }
    }
    // Two roots of one source (both `source.current` and `source.missing` cannot happen, but
    // nothing is ever dropped): whatever was not attached stays top-level.
    out.extend(derived);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Action;

    fn about(id: &str, severity: Severity, key: &str) -> Finding {
        Finding::new(id, severity, key, "m")
            .with_fix("run the command by hand")
            .with_source(key)
    }

    #[test]
    fn a_deleted_snapshot_is_one_error_with_its_consequences_under_it() {
        let root = Finding::new("source.current", Severity::Error, "a", "deleted generation")
            .with_fix("fable apply")
            .with_action(Action::Gc)
            .with_source("a");
        let findings = vec![
            root,
            about("source.state", Severity::Error, "a"),
            about("profile.missing_file", Severity::Error, "a"),
            about("probe.skipped", Severity::Warn, "a"),
            about("profile.timeout", Severity::Warn, "a"),
            about("profile.missing_file", Severity::Error, "b"),
            about("source.checkout", Severity::Ok, "a"),
        ];
        let out = fold(findings);
        let errors: Vec<&Finding> = out
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .collect();
        assert_eq!(errors.len(), 2, "{out:#?}");
        let root = &out[0];
        assert_eq!(root.fix.as_deref(), Some("fable doctor --fix"));
        let ids: Vec<&str> = root.consequences.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(
            ids,
            ["source.state", "profile.missing_file", "probe.skipped"]
        );
        assert!(root
            .consequences
            .iter()
            .all(|f| f.fix.as_deref() == Some("fable doctor --fix")));
        // The timeout warning is its own problem; source b's error is not a's consequence.
        assert!(out.iter().any(|f| f.id == "profile.timeout"));
        assert!(out
            .iter()
            .any(|f| f.id == "profile.missing_file" && f.source.as_deref() == Some("b")));
    }

    #[test]
    fn without_a_root_cause_nothing_moves() {
        let findings = vec![
            about("source.state", Severity::Warn, "a"),
            about("probe.exit", Severity::Warn, "a"),
        ];
        assert_eq!(fold(findings.clone()), findings);
    }
}
