//! The infrastructure's own tests: advisories, the Stop bound shared with the lifecycle cap,
//! failing open, the fire log.

use super::*;

#[test]
fn nested_worktree_advisory_once_per_session() {
    let fx = fixture(GUARDS);
    let agent = |cwd: &str, session: Option<&str>, sub: bool| {
        let mut v = json!({"tool_name": "Agent", "tool_input": {"subagent_type": "x"}, "cwd": cwd});
        if let Some(s) = session {
            v["session_id"] = json!(s);
        }
        if sub {
            v["agent_id"] = json!("a");
        }
        v.to_string()
    };
    let adv = "advisory:nested-worktree-spawn";
    for (cwd, session, sub, want) in [
        ("{wt}", Some("s1"), false, adv),
        ("{wt}", Some("s1"), false, "allow"),
        ("{wt}/src", Some("s1"), false, "allow"),
        ("{wt}", Some("s2"), false, adv),
        ("{wt}", None, false, adv),
        ("{wt}", None, false, adv),
        ("{primary}", Some("s3"), false, "allow"),
        // A subagent's spawn is the nested-orchestration deny, never this advisory.
        ("{wt}", Some("s4"), true, "deny:orchestrator-singularity"),
    ] {
        let d = run(&fx, Event::PreToolUse, &agent(cwd, session, sub), &[]);
        assert_eq!(outcome(&d), want, "{cwd} {session:?}");
    }
    let d = run(
        &fx,
        Event::PreToolUse,
        &agent("{wt}", Some("s9"), false),
        &[("AE_NESTED_WORKTREE_GUARD_DISABLE", "1")],
    );
    assert_eq!(outcome(&d), "allow");
}

#[test]
fn advisories_render_as_context_for_claude_and_notes_elsewhere() {
    let fx = fixture(GUARDS);
    let payload = json!({"tool_name": "Agent", "tool_input": {}, "cwd": fx.wt});
    let input = normalize(payload.as_object().unwrap());
    let config = config::read(&fx.project.fable_dir).unwrap();
    let env = |_: &str| None;
    for (host, context) in [
        (Host::Claude, true),
        (Host::Codex, false),
        (Host::Gemini, false),
    ] {
        let ctx = Ctx {
            event: Event::PreToolUse,
            host,
            input: &input,
            project: &fx.project,
            config: &config,
            env: &env,
            durable: false,
        };
        let (v, _) = pre_tool_use(PACKS, &ctx);
        assert_eq!(matches!(v, Verdict::Context(_)), context, "{host:?}");
        assert_eq!(matches!(v, Verdict::Note(_)), !context, "{host:?}");
    }
}

/// A Stop rule that always blocks, and one that panics: the infrastructure's test pack.
struct AlwaysBlocks;
impl Rule for AlwaysBlocks {
    fn id(&self) -> &'static str {
        "always-blocks"
    }
    fn event(&self) -> Event {
        Event::Stop
    }
    fn candidate(&self, _: &Input) -> bool {
        true
    }
    fn check(&self, _: &Ctx<'_>) -> Result<Action, RuleError> {
        Ok(Action::Deny {
            why: "test",
            message: "not yet".into(),
        })
    }
}
struct Panics;
impl Rule for Panics {
    fn id(&self) -> &'static str {
        "panics"
    }
    fn event(&self) -> Event {
        Event::Stop
    }
    fn candidate(&self, _: &Input) -> bool {
        true
    }
    fn check(&self, _: &Ctx<'_>) -> Result<Action, RuleError> {
        panic!("a bug in a rule")
    }
}
static TEST_PACKS: &[Pack] = &[Pack {
    name: "guards",
    summary: "test",
    rules: &[&Panics, &AlwaysBlocks],
}];

#[test]
fn a_stop_blocking_rule_is_bounded_by_the_shared_counter() {
    let fx = fixture(GUARDS);
    let cfg = Config {
        durable: false,
        ..Config::default()
    };
    let stop = |active: bool| {
        let v = json!({"session_id": "s1", "cwd": fx.primary, "stop_hook_active": active});
        normalize(v.as_object().unwrap())
    };
    let config = config::read(&fx.project.fable_dir).unwrap();
    let env = |_: &str| None;
    let verdict = |input: &Input, gate: Verdict| {
        let ctx = Ctx {
            event: Event::Stop,
            host: Host::Claude,
            input,
            project: &fx.project,
            config: &config,
            env: &env,
            durable: false,
        };
        stop_verdict(TEST_PACKS, &ctx, &cfg, gate, &Default::default())
    };
    let input = stop(false);
    for n in 1..=cfg.stop_block_limit {
        let (v, d) = verdict(&input, Verdict::Allow);
        assert_eq!(v, Verdict::Block("not yet".into()), "block {n}");
        assert_eq!(d.fires[0].verdict, "deny");
        assert_eq!(d.errors.len(), 1, "the panicking rule failed open");
    }
    let (v, d) = verdict(&input, Verdict::Allow);
    assert!(
        matches!(&v, Verdict::Note(n) if n.contains("STOP LET THROUGH") && n.contains("not yet")),
        "{v:?}"
    );
    assert_eq!(d.fires[0].verdict, "released");
    // The counter starts again, and is shared with the lifecycle gate's blocks.
    let (v, _) = verdict(&input, Verdict::Block("lifecycle".into()));
    assert_eq!(v, Verdict::Block("lifecycle".into()));
    let (v, _) = verdict(&input, Verdict::Allow);
    assert_eq!(v, Verdict::Block("not yet".into()));
    // A re-entrant stop does not run pack rules.
    let (v, d) = verdict(&stop(true), Verdict::Allow);
    assert_eq!(v, Verdict::Allow);
    assert!(d.fires.is_empty());
}

#[test]
fn candidates_need_no_io_and_select_only_relevant_calls() {
    for (payload, event, want) in [
        (
            json!({"tool_name": "Bash", "tool_input": {"command": "rm $x"}}),
            Event::PreToolUse,
            true,
        ),
        (
            json!({"tool_name": "Bash", "tool_input": {"command": "ls $x"}}),
            Event::PreToolUse,
            false,
        ),
        (
            json!({"tool_name": "Bash", "tool_input": {"command": "rm x"}}),
            Event::PreToolUse,
            false,
        ),
        (
            json!({"tool_name": "Read", "tool_input": {"file_path": "/x"}}),
            Event::PreToolUse,
            false,
        ),
        (
            json!({"tool_name": "Read", "agent_id": "a"}),
            Event::PreToolUse,
            true,
        ),
        (
            json!({"tool_name": "Edit", "agent_id": ""}),
            Event::PreToolUse,
            false,
        ),
        (json!({"tool_name": "Task"}), Event::PreToolUse, true),
        (
            json!({"tool_name": "Write", "tool_input": {}}),
            Event::PreToolUse,
            false,
        ),
        (
            json!({"tool_name": "Bash", "tool_input": {"command": "rm $x"}}),
            Event::PostToolUse,
            false,
        ),
        // selector-development's revert warning looks at every stop (the lifecycle gate
        // discovers the project anyway; the pack's config is the one extra read).
        (json!({}), Event::Stop, true),
        (json!({}), Event::SessionEnd, false),
        (
            json!({"tool_name": "Edit", "tool_input": {"file_path": "/w/src/a.tsx"}}),
            Event::PreToolUse,
            true,
        ),
        (
            json!({"tool_name": "Edit", "tool_input": {"file_path": "/w/src/a.rs"}}),
            Event::PreToolUse,
            false,
        ),
        (
            json!({"tool_name": "Bash", "tool_input": {"command": "npm test"}}),
            Event::PostToolUse,
            true,
        ),
    ] {
        let input = normalize(payload.as_object().unwrap());
        assert_eq!(candidate(PACKS, event, &input), want, "{payload} {event:?}");
    }
}

#[test]
fn governing_project_from_a_worktree_without_its_own_fable_is_the_primary() {
    let fx = fixture(GUARDS);
    let (p, c) = governing(&fx.wt.join("src"), None).unwrap();
    assert_eq!(p.root, fx.primary);
    assert!(c.enabled("guards"));
    assert!(governing(&fx.primary, Some(&fx.primary)).is_some());
    std::fs::write(fx.primary.join(".fable/config.toml"), "packs = [").unwrap();
    assert!(
        governing(&fx.primary, Some(&fx.primary)).is_none(),
        "invalid config enables nothing"
    );
    std::fs::write(fx.primary.join(".fable/config.toml"), "x".repeat(70_000)).unwrap();
    assert!(
        governing(&fx.primary, Some(&fx.primary)).is_none(),
        "oversized"
    );
    let _ = Path::new("");
}
