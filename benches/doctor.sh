#!/usr/bin/env bash
# Benchmark: `fable doctor` with 20 probes, one of which never exits (docs/design.md, "Budgets":
# <= probe deadline + 1 s). A plugin source wiring 20 PreToolUse hooks (19 answer at once, one
# sleeps forever) is installed into a temp HOME; the doctor runs with the default 5 s deadline.
# Also times `fable doctor --no-probe` (the checks alone) and verifies that the hanging hook
# left no process behind.
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
unset CLAUDE_CONFIG_DIR CODEX_HOME GEMINI_CLI_HOME QWEN_HOME COPILOT_HOME OPENCODE_CONFIG_DIR FACTORY_HOME_OVERRIDE KIMI_CODE_HOME XDG_CONFIG_HOME FABLE_INVENTORY
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
