#!/usr/bin/env bash
# Benchmark: `fable doctor` with 20 probes, one of which never exits (docs/design.md, "Budgets":
# <= probe deadline + 1 s). A plugin source wiring 20 PreToolUse hooks (19 answer at once, one
# sleeps forever) is installed into a temp HOME; the doctor runs with the default 5 s deadline.
# Also times `fable doctor --no-probe` (the checks alone) and verifies that the hanging hook
# left no process behind.
#
# Second section, "many plugins": 32 plugin-shaped sources (SessionStart, PreToolUse,
# PostToolUse and Stop hooks; half without timeouts) wired into four hosts (Claude Code, Codex,
# Gemini CLI, Cursor). Every hook script appends a line to a counter file, so the section checks
# what ran, not only what was reported: the first doctor runs each distinct probe once (budget
# 3 s), the second runs none and answers every entry from the probe cache (budget 0.5 s),
# `--no-cache` runs them all again, and editing one source's script and reinstalling re-runs
# that source's probes only. Results are checked in both modes; timing is printed, never judged.
#
#   bash benches/doctor.sh           # release build
#   bash benches/doctor.sh --smoke   # debug build (CI smoke test, never pass/fail on time)
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}
if [ "${1:-}" = "--smoke" ]; then
	cargo build --quiet
	bin=$target/debug/fable
else
	cargo build --release --quiet
	bin=$target/release/fable
fi
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac

tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
export HOME="$tmp/home" FABLE_HOME="$tmp/home/.fable"
unset CLAUDE_CONFIG_DIR CODEX_HOME GEMINI_CLI_HOME QWEN_HOME COPILOT_HOME OPENCODE_CONFIG_DIR FACTORY_HOME_OVERRIDE KIMI_CODE_HOME KILO_CONFIG_DIR XDG_CONFIG_HOME FABLE_INVENTORY
mkdir -p "$HOME"
marker="fable-doctor-bench-$$-$(date +%s%N)"
src="$tmp/plugin"
mkdir -p "$src/hooks"
printf 'cat >/dev/null\necho "{}"\n' >"$src/hooks/ok.sh"
printf 'cat >/dev/null\nsh -c "sleep 1000; echo %s"\n' "$marker" >"$src/hooks/hang.sh"
{
	printf '{"hooks": {"PreToolUse": [{"hooks": [\n'
	for i in $(seq 1 19); do
		printf '{"type": "command", "command": "sh \\"${CLAUDE_PLUGIN_ROOT}/hooks/ok.sh\\" %s", "timeout": 10},\n' "$i"
	done
	printf '{"type": "command", "command": "sh \\"${CLAUDE_PLUGIN_ROOT}/hooks/hang.sh\\"", "timeout": 10}\n'
	printf ']}]}}\n'
} >"$src/hooks/hooks.json"
"$bin" install "$src" >/dev/null

ms() { echo $(($(date +%s%N) / 1000000)); }
start=$(ms)
set +e
"$bin" doctor --json >"$tmp/report.json"
code=$?
set -e
end=$(ms)
probes=$(grep -c '"id": "probe\.' "$tmp/report.json" || true)
timeouts=$(grep -c '"id": "probe.timeout"' "$tmp/report.json" || true)
echo "doctor, 20 probes (1 hanging), deadline 5 s: $((end - start)) ms (budget 6000 ms); exit $code; $probes probe findings, $timeouts timed out"

start=$(ms)
"$bin" doctor --no-probe >/dev/null
end=$(ms)
echo "doctor --no-probe (checks only): $((end - start)) ms"

if pgrep -f "$marker" >/dev/null; then
	echo "FAIL: the hanging hook left a process behind" >&2
	exit 1
fi
echo "no process left behind"

# --- many plugins: deduplicated, cached probes -------------------------------------------------
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
many="$tmp/many"
export HOME="$many/home" FABLE_HOME="$many/home/.fable"
mkdir -p "$HOME/.claude" "$HOME/.codex" "$HOME/.gemini" "$HOME/.cursor"
# Gemini runs hooks only in trusted folders unless folder trust is off: off, so that the
# report is about the hooks.
printf '{"security": {"folderTrust": {"enabled": false}}}\n' >"$HOME/.gemini/settings.json"
counter="$many/probes.log"
: >"$counter"
sources=32
for i in $(seq 1 "$sources"); do
	src="$many/plugins/plugin-$i"
	mkdir -p "$src/hooks"
	# One script for every event, told which by its argument (as many plugins do); it counts
	# its runs, reads its payload and answers like a well-behaved hook.
	printf 'echo "plugin-%s $1" >>"%s"\ncat >/dev/null\necho "{}"\n' "$i" "$counter" >"$src/hooks/run.sh"
	if [ $((i % 2)) = 0 ]; then t=', "timeout": 10'; else t=''; fi
	cat >"$src/hooks/hooks.json" <<JSON
{"hooks": {
  "SessionStart": [{"hooks": [{"type": "command", "command": "sh \"\${CLAUDE_PLUGIN_ROOT}/hooks/run.sh\" start"$t}]}],
  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "sh \"\${CLAUDE_PLUGIN_ROOT}/hooks/run.sh\" pre"$t}]}],
  "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "sh \"\${CLAUDE_PLUGIN_ROOT}/hooks/run.sh\" post"$t}]}],
  "Stop": [{"hooks": [{"type": "command", "command": "sh \"\${CLAUDE_PLUGIN_ROOT}/hooks/run.sh\" stop"$t}]}]
}}
JSON
	"$bin" install "$src" >/dev/null 2>&1 || fail "install of plugin-$i failed"
done
# summary FIELD...: reads summary fields from the report on stdin, space-separated.
summary() { python3 -c 'import json,sys; s=json.load(sys.stdin)["summary"]; print(*[s["probes"][k] if k in s["probes"] else s[k] for k in sys.argv[1:]])' "$@"; }
runs() { wc -l <"$counter" | tr -d ' '; }
doctor_timed() {
	local start end
	start=$(ms)
	"$bin" doctor --json "$@" >"$many/report.json" || true
	end=$(ms)
	echo $((end - start))
}
first=$(doctor_timed)
read -r srcs hosts entries ran cached errors warnings < <(summary sources hosts entries run cached errors warnings <"$many/report.json")
first_runs=$(runs)
[ "$srcs" = "$sources" ] || fail "expected $sources sources, the report has $srcs"
[ "$hosts" = 4 ] || fail "expected 4 hosts, the report has $hosts"
[ "$ran" -gt 0 ] && [ "$cached" = 0 ] || fail "first doctor: $ran run, $cached cached"
[ "$first_runs" = "$ran" ] || fail "first doctor reported $ran runs, the hooks counted $first_runs"
bad=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(*[f["subject"] + ": " + f["message"] for f in r["findings"] if f["id"].startswith("probe.") and f["severity"] != "ok"], sep="\n")' "$many/report.json")
[ -z "$bad" ] || fail "probes that did not pass: $bad"
echo "doctor, $sources plugins x 4 hosts ($entries entries, $ran distinct probes run): first ${first} ms (budget 3000 ms); $errors errors, $warnings warnings"
second=$(doctor_timed)
read -r ran2 cached2 < <(summary run cached <"$many/report.json")
[ "$(runs)" = "$first_runs" ] || fail "the second doctor ran $(($(runs) - first_runs)) hook(s); expected none"
[ "$ran2" = 0 ] && [ "$cached2" = "$ran" ] || fail "second doctor: $ran2 run, $cached2 cached"
echo "doctor again, nothing changed: ${second} ms (budget 500 ms); 0 probes run, $cached2 answered from the cache"
before=$(runs)
nocache=$(doctor_timed --no-cache)
[ $(($(runs) - before)) = "$ran" ] || fail "--no-cache ran $(($(runs) - before)) hooks, expected $ran"
echo "doctor --no-cache: ${nocache} ms; $ran probes run again"
# One source changes: only its probes run again.
printf '\n# edited\n' >>"$many/plugins/plugin-7/hooks/run.sh"
"$bin" install "$many/plugins/plugin-7" >/dev/null 2>&1 || fail "reinstall of plugin-7 failed"
before=$(runs)
edited=$(doctor_timed)
again=$(($(runs) - before))
others=$(tail -n "$again" "$counter" | grep -vc '^plugin-7 ' || true)
[ "$again" -gt 0 ] && [ "$others" = 0 ] || fail "after editing plugin-7: $again hooks ran, $others of other plugins"
echo "doctor after editing one plugin: ${edited} ms; $again probes run, all of plugin-7"

