#!/usr/bin/env bash
# Benchmark: `fable install` when everything is already current (docs/design.md, "Budgets").
# 4 profiles (two Claude Code dirs, Codex, Gemini), a 500-file plugin source.
# Prints the median wall time of N runs and proves zero writes (a full listing of the temp
# HOME with sizes, modes and nanosecond mtimes is identical before and after the runs).
#
#   bash benches/install.sh            # release build, 50 runs, budget check printed
#   bash benches/install.sh --smoke    # debug build, 3 runs (CI smoke test, never pass/fail on time)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=50
profile=release
if [ "${1:-}" = "--smoke" ]; then runs=3; profile=debug; fi
if [ "$profile" = release ]; then cargo build --release --quiet; bin=target/release/fable; else cargo build --quiet; bin=target/debug/fable; fi
bin=$(pwd)/$bin

tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
export HOME="$tmp/home" FABLE_HOME="$tmp/home/.fable"
unset CLAUDE_CONFIG_DIR CODEX_HOME GEMINI_CLI_HOME QWEN_HOME COPILOT_HOME OPENCODE_CONFIG_DIR FACTORY_HOME_OVERRIDE KIMI_CODE_HOME KILO_CONFIG_DIR XDG_CONFIG_HOME FABLE_INVENTORY
mkdir -p "$HOME/.claude" "$HOME/.codex" "$HOME/.gemini" "$tmp/claude-second"
src="$tmp/plugin"
mkdir -p "$src/hooks/lib"
for i in $(seq 1 498); do echo "# helper $i" > "$src/hooks/lib/mod_$i.py"; done
echo 'import sys; sys.exit(0)' > "$src/hooks/guard.py"
cat > "$src/hooks/hooks.json" <<'JSON'
{"hooks": {
  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 \"${CLAUDE_PLUGIN_ROOT}/hooks/guard.py\"", "timeout": 10}]}],
  "Stop": [{"hooks": [{"type": "command", "command": "python3 \"${CLAUDE_PLUGIN_ROOT}/hooks/guard.py\"", "timeout": 10}]}]
}}
JSON
files=$(find "$src/hooks" -type f | wc -l)
"$bin" profile add claude "$tmp/claude-second" >/dev/null
"$bin" install "$src" >/dev/null
profiles=$("$bin" profile list | wc -l)

listing() { find "$tmp" -printf '%p %s %m %T@\n' | sort; }
before=$(listing)
times=()
for _ in $(seq 1 "$runs"); do
  t0=$(date +%s%N)
  out=$("$bin" install "$src" --json)
  t1=$(date +%s%N)
  case "$out" in *'"changed": false'*) ;; *) echo "install was not a no-op: $out" >&2; exit 1;; esac
  times+=($(( (t1 - t0) / 1000 )))
done
after=$(listing)
if [ "$before" != "$after" ]; then
  echo "FAIL: a current install wrote to disk:" >&2
  diff <(echo "$before") <(echo "$after") >&2 || true
  exit 1
fi
median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
echo "fable install (already current): $profiles profiles, $files-file source, $runs runs ($profile build)"
echo "median wall: $((median / 1000)).$(printf '%03d' $((median % 1000))) ms (budget 50 ms); writes: 0"
