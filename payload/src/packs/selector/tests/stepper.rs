//! The pipeline stepper, the revert warning on Stop and the workspace root, in process.

use serde_json::{json, Value};

use super::*;

#[test]
fn step_signatures() {
    for (cmd, step) in [
        (
            "npx playwright-cli --session a screenshot tests/e2e/before/home.png",
            Some(1),
        ),
        ("playwright-cli  screenshot x/before/a.png", Some(1)),
        ("playwright-cli screenshot x/before/a.png", None),
        ("npm run typecheck", Some(3)),
        ("npx tsc -p .", Some(3)),
        ("tsc --noEmit", Some(3)),
        ("npm test", Some(4)),
        ("npm run test -- --run", Some(4)),
        ("npx vitest run", Some(4)),
        ("npx jest src", Some(4)),
        ("npx playwright test && npm test", Some(5)),
        ("npx playwright test tests/e2e/a.spec.ts", Some(5)),
        ("npx playwright-cli test", None),
        (
            "npx playwright-cli open http://x screenshot out/after/a.png",
            Some(6),
        ),
        ("node hooks/lib/visual-diff.js before after", Some(7)),
        ("node visual-diff.js", None),
        ("git add -A && git commit -m 'selectors'", Some(8)),
        ("git status", None),
        ("ls", None),
    ] {
        assert_eq!(detect_command(cmd), step, "{cmd}");
    }
    for (text, px) in [
        ("diff_pixels: 0", Some(0)),
        ("{\"diff_pixels\": 12}", Some(12)),
        ("diff_pixels=3\ndone", Some(3)),
        ("nothing", None),
    ] {
        assert_eq!(diff_pixels(text), px, "{text}");
    }
}

#[test]
fn stepper_silent_allows_and_predecessors() {
    let ws = Ws::new();
    let commit = bash("git commit -m x");
    // No scope, no receipt, invalid receipt, undetected step, other tools: silent.
    assert_eq!(ws.pre(commit.clone(), &[]), "allow", "no .current-scope");
    ws.write(&format!("{STATE_DIR}/{CURRENT_SCOPE}"), "s\n");
    assert_eq!(ws.pre(commit.clone(), &[]), "allow", "no receipt");
    ws.write(&format!("{STATE_DIR}/s.receipt.json"), "{not json");
    assert_eq!(ws.pre(commit.clone(), &[]), "allow", "invalid receipt");
    ws.scope(json!([]));
    assert_eq!(ws.pre(bash("ls"), &[]), "allow", "undetected");
    assert_eq!(
        ws.pre(
            json!({"tool_name": "Read", "cwd": "{root}", "tool_input": {"file_path": "x"}}),
            &[]
        ),
        "allow"
    );
    let pass = |n: &str| json!({"name": n, "status": "pass", "ts": "t"});
    let step_call = |i: usize| -> Value {
        match i {
            1 => bash("playwright-cli -s a screenshot t/before/a.png"),
            2 => edit("{root}/src/Button.tsx", ADD.0, ADD.1),
            3 => bash("npm run typecheck"),
            4 => bash("npm test"),
            5 => bash("npx playwright test"),
            6 => bash("playwright-cli -s a screenshot t/after/a.png"),
            7 => bash("node hooks/lib/visual-diff.js"),
            _ => bash("git commit -m x"),
        }
    };
    let test_mode = [
        ("FABLE_SELECTOR_TEST_MODE", "1"),
        ("FAKE_STAGED_HASH", "h1"),
    ];
    for i in 1..=8 {
        // Every step but the first is denied with an empty journal, naming its predecessor.
        ws.scope(json!([]));
        let d = ws.run(Event::PreToolUse, step_call(i), &test_mode);
        if i == 1 {
            assert!(d.deny.is_none());
        } else {
            let msg = d.deny.clone().unwrap_or_default();
            let pred = pipeline::STEPS[i - 2];
            assert!(msg.contains(pred) && msg.contains("scope s"), "{i}: {msg}");
            assert_eq!(
                outcome(&d),
                "deny:selector-pipeline-stepper:predecessor step missing"
            );
        }
        // With its predecessor passed it is allowed.
        let mut steps: Vec<Value> = pipeline::STEPS[..i - 1].iter().map(|n| pass(n)).collect();
        ws.scope(json!(steps.clone()));
        let mut r = ws.receipt();
        r["git_diff_hash"] = json!("h1");
        ws.write(&format!("{STATE_DIR}/s.receipt.json"), &r.to_string());
        assert_eq!(ws.pre(step_call(i), &test_mode), "allow", "step {i}");
        // Any failed step denies every later step.
        if i > 1 {
            steps.push(json!({"name": "typecheck", "status": "fail", "ts": "t"}));
            ws.scope(json!(steps));
            assert_eq!(
                ws.pre(step_call(i), &test_mode),
                "deny:selector-pipeline-stepper:a journalled step failed",
                "step {i}"
            );
        }
    }
    // Commit needs the staged diff recorded at step 2.
    let all7: Vec<Value> = pipeline::STEPS[..7].iter().map(|n| pass(n)).collect();
    ws.scope(json!(all7));
    let mut r = ws.receipt();
    r["git_diff_hash"] = json!("h1");
    ws.write(&format!("{STATE_DIR}/s.receipt.json"), &r.to_string());
    let other = [
        ("FABLE_SELECTOR_TEST_MODE", "1"),
        ("FAKE_STAGED_HASH", "h2"),
    ];
    assert_eq!(
        ws.pre(commit.clone(), &other),
        "deny:selector-pipeline-stepper:staged diff differs from the patch"
    );
    assert_eq!(ws.pre(commit.clone(), &test_mode), "allow");
    assert_eq!(
        ws.pre(
            commit.clone(),
            &[
                ("FABLE_DISABLE_SELECTOR_PIPELINE_STEPPER", "1"),
                ("FAKE_STAGED_HASH", "h2"),
                ("FABLE_SELECTOR_TEST_MODE", "1")
            ]
        ),
        "allow"
    );
}

fn post(ws: &Ws, mut payload: Value, response: Value, env: &[(&str, &str)]) {
    payload["tool_response"] = response;
    let d = ws.run(Event::PostToolUse, payload, env);
    assert!(d.deny.is_none() && d.errors.is_empty(), "{:?}", d.errors);
}

#[test]
fn stepper_records_steps_and_archives_on_commit() {
    let ws = Ws::new();
    ws.scope(json!([]));
    let env = [
        ("FABLE_SELECTOR_TEST_MODE", "1"),
        ("FAKE_STAGED_HASH", "abc"),
    ];
    let ok = json!({"stdout": "", "stderr": "", "interrupted": false});
    post(
        &ws,
        bash("playwright-cli -s a screenshot t/before/a.png"),
        ok.clone(),
        &env,
    );
    post(
        &ws,
        edit("{root}/src/Button.tsx", ADD.0, ADD.1),
        json!({"filePath": "x"}),
        &env,
    );
    let r = ws.receipt();
    assert_eq!(r["steps"][0]["name"], "before_snapshot");
    assert_eq!(r["steps"][0]["status"], "pass");
    assert!(r["steps"][0]["ts"].as_str().unwrap().ends_with('Z'));
    assert_eq!(r["steps"][1]["name"], "patch_applied");
    let file = ws.root.join("src/Button.tsx").display().to_string();
    assert_eq!(r["steps"][1]["files"], json!([file]));
    assert_eq!(r["files"], json!([file]));
    assert_eq!(r["git_diff_hash"], "abc");
    // A failing command is recorded as a fail; so is PostToolUseFailure.
    post(
        &ws,
        bash("npm run typecheck"),
        json!({"exit_code": 2}),
        &env,
    );
    assert_eq!(ws.receipt()["steps"][2]["status"], "fail");
    let d = ws.run(Event::PostToolUseFailure, bash("npm test"), &env);
    assert!(d.errors.is_empty());
    assert_eq!(ws.receipt()["steps"][3]["status"], "fail");
    // Visual diff: diff_pixels > 0 is a fail even with exit 0.
    post(
        &ws,
        bash("node x/visual-diff.js"),
        json!({"stdout": "diff_pixels: 4"}),
        &env,
    );
    let r = ws.receipt();
    assert_eq!(r["steps"][4]["diff_pixels"], 4);
    assert_eq!(r["steps"][4]["status"], "fail");
    post(
        &ws,
        bash("node x/visual-diff.js"),
        json!({"stdout": "diff_pixels: 0"}),
        &env,
    );
    assert_eq!(ws.receipt()["steps"][5]["status"], "pass");
    // A failed commit is journalled and archives nothing.
    post(&ws, bash("git commit -m x"), json!({"exit_code": 1}), &env);
    assert!(ws.root.join(STATE_DIR).join(CURRENT_SCOPE).exists());
    // A passing commit archives the receipt and ends the scope.
    post(&ws, bash("git commit -m x"), ok, &env);
    let dir = ws.root.join(STATE_DIR);
    assert!(!dir.join(CURRENT_SCOPE).exists());
    assert!(!dir.join("s.receipt.json").exists());
    let archived: Vec<_> = std::fs::read_dir(dir.join("archive"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(archived.len(), 1);
    assert!(
        archived[0].starts_with("s.") && archived[0].ends_with(".receipt.json"),
        "{archived:?}"
    );
    let a: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("archive").join(&archived[0])).unwrap(),
    )
    .unwrap();
    assert_eq!(
        a["steps"].as_array().unwrap().last().unwrap()["name"],
        "commit"
    );
    // No scope: nothing recorded, nothing created.
    post(&ws, bash("npm test"), json!({}), &env);
    assert!(!dir.join("s.receipt.json").exists());
    // No leftover temp files.
    let tmp = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .count();
    assert_eq!(tmp, 0);
}

#[test]
fn revert_on_stop_warns_until_visual_diff() {
    let ws = Ws::new();
    let stop = json!({"cwd": "{root}", "session_id": "s1", "hook_event_name": "Stop"});
    let run = |ws: &Ws| ws.run(Event::Stop, stop.clone(), &[]);
    assert_eq!(outcome(&run(&ws)), "allow", "no scope");
    let pass = |n: &str| json!({"name": n, "status": "pass", "ts": "t"});
    for (steps, warn) in [
        (json!([]), true),
        (json!([pass("before_snapshot")]), true),
        (
            json!([
                pass("before_snapshot"),
                pass("patch_applied"),
                pass("typecheck")
            ]),
            true,
        ),
        (json!([pass("visual_diff")]), false),
        (json!([pass("commit")]), false),
        (
            json!([pass("visual_diff"), {"name": "commit", "status": "fail", "ts": "t"}]),
            false,
        ),
    ] {
        ws.scope(steps.clone());
        let mut r = ws.receipt();
        r["files"] = json!(["src/Button.tsx", "src/a b.tsx"]);
        ws.write(&format!("{STATE_DIR}/s.receipt.json"), &r.to_string());
        let d = run(&ws);
        assert_eq!(
            outcome(&d),
            if warn {
                "advisory:selector-revert-on-stop"
            } else {
                "allow"
            },
            "{steps}"
        );
        if warn {
            let msg = &d.advice[0];
            assert!(
                msg.contains("scope s")
                    && msg.contains("git checkout -- src/Button.tsx 'src/a b.tsx'")
                    && msg.contains(".current-scope")
                    && msg.contains("s.receipt.json"),
                "{msg}"
            );
            let last = steps
                .as_array()
                .unwrap()
                .last()
                .map(|s| s["name"].as_str().unwrap());
            assert!(msg.contains(last.unwrap_or("no step passed")), "{msg}");
        }
    }
    ws.scope(json!([]));
    let d = ws.run(
        Event::Stop,
        stop.clone(),
        &[("FABLE_DISABLE_SELECTOR_REVERT_ON_STOP", "1")],
    );
    assert_eq!(outcome(&d), "allow");
}

#[test]
fn workspace_root_resolution() {
    let ws = Ws::new();
    std::fs::create_dir_all(ws.root.join("src/deep")).unwrap();
    // From a subdirectory, the git top level is the root: the e2e specs are found there.
    ws.remove("package.json");
    let sub = json!({"tool_name": "Write", "cwd": ws.root.join("src/deep"),
                     "tool_input": {"file_path": "x.tsx", "content": "x"}});
    assert_eq!(
        ws.pre(sub.clone(), &[]),
        "deny:selector-activation-gate:frontend source not present"
    );
    // WORKSPACE_ROOT wins.
    let other = tempfile::tempdir().unwrap();
    std::fs::write(
        other.path().join("package.json"),
        r#"{"dependencies": {"lit": "1"}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(other.path().join("tests/e2e")).unwrap();
    std::fs::write(other.path().join("tests/e2e/a.spec.ts"), "").unwrap();
    let root = other.path().display().to_string();
    assert_eq!(ws.pre(sub.clone(), &[("WORKSPACE_ROOT", &root)]), "allow");
    // Without a .git anywhere, there is no top level: the call's directory is the root.
    let bare = tempfile::tempdir().unwrap();
    assert_eq!(workspace::git_top_level(bare.path()), None);
}

#[test]
fn staged_hash_is_sha256_of_git_diff_cached() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir)
            .output()
            .unwrap();
        assert!(ok.status.success(), "{args:?}");
        ok.stdout
    };
    git(&["init", "-q"]);
    std::fs::write(dir.join("a.txt"), "one\n").unwrap();
    git(&["add", "a.txt"]);
    let out = git(&["diff", "--cached"]);
    let want: String = <sha2::Sha256 as sha2::Digest>::digest(&out)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let got = workspace::git_diff_cached_hash(dir, workspace::GIT_DEADLINE).unwrap();
    assert_eq!(got, want);
    // Outside a repository git fails: an error (the rule fails open).
    let none = tempfile::tempdir().unwrap();
    assert!(workspace::git_diff_cached_hash(none.path(), workspace::GIT_DEADLINE).is_err());
}

#[test]
fn patch_applied_without_a_staged_hash_is_journalled_and_the_error_reported() {
    // `.git` here is an empty directory: `git diff --cached` fails.
    let ws = Ws::new();
    ws.scope(json!([{"name": "before_snapshot", "status": "pass", "ts": "t"}]));
    let mut call = edit("{root}/src/Button.tsx", ADD.0, ADD.1);
    call["tool_response"] = json!({"filePath": "x"});
    let d = ws.run(Event::PostToolUse, call, &[]);
    assert!(d.deny.is_none());
    assert_eq!(d.errors.len(), 1, "{:?}", d.errors);
    assert!(d.errors[0].contains("git diff --cached"), "{:?}", d.errors);
    let r = ws.receipt();
    assert_eq!(r["steps"][1]["name"], "patch_applied");
    assert_eq!(r["steps"][1]["status"], "pass");
    assert!(r.get("git_diff_hash").is_none());
}
