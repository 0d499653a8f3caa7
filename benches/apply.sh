#!/usr/bin/env bash
# Benchmark: `fable apply` when everything is already current (docs/design.md, "Budgets").
# An inventory of 100 path sources (5 files each) wired into 8 profiles (Claude Code, Codex,
# Gemini, Cursor, Qwen Code and three more Claude Code dirs). Prints the median wall time of N
# runs and proves zero writes: a full listing of the temp tree (FABLE_HOME, every profile,
# every source) with sizes, modes, inode numbers and nanosecond mtimes and ctimes is identical
# before and after the runs (an atomic rename would change the inode, a rewrite the mtime, a
# chmod the ctime).
#
#   bash benches/apply.sh            # release build, 20 runs, budget check printed
#   bash benches/apply.sh --smoke    # debug build, 20 sources, 2 runs (CI smoke test: checks the
#                                    # results and the zero writes, never pass/fail on time)
#   bash benches/apply.sh --large    # release build, 1,000 sources in 11 profiles (the eight above,
#                                    # Droid, Augment and Kimi Code), 5 runs, budget 1 s
set -euo pipefail
cd "$(dirname "$0")/.."
runs=20
profile=release
sources=100
extra_hosts=""
budget=200
case "${1:-}" in
  --smoke) runs=2; profile=debug; sources=20 ;;
  --large) runs=5; sources=1000; extra_hosts=".factory .augment .kimi-code"; budget=1000 ;;
  "") ;;
  *) echo "usage: bash benches/apply.sh [--smoke|--large]" >&2; exit 2 ;;
esac
if [ "$profile" = release ]; then cargo build --release --quiet; bin=target/release/fable; else cargo build --quiet; bin=target/debug/fable; fi
bin=$(pwd)/$bin

tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
export HOME="$tmp/home" FABLE_HOME="$tmp/home/.fable"
unset CLAUDE_CONFIG_DIR CODEX_HOME GEMINI_CLI_HOME QWEN_HOME COPILOT_HOME OPENCODE_CONFIG_DIR FACTORY_HOME_OVERRIDE KIMI_CODE_HOME KILO_CONFIG_DIR XDG_CONFIG_HOME FABLE_INVENTORY
mkdir -p "$HOME/.claude" "$HOME/.codex" "$HOME/.gemini" "$HOME/.cursor" "$HOME/.qwen" "$FABLE_HOME"
for d in $extra_hosts; do mkdir -p "$HOME/$d"; done
expected_profiles=$(( 8 + $(echo $extra_hosts | wc -w) ))
inv="$FABLE_HOME/fleet.toml"
printf '# benchmark fleet\nschema = 1\n\n' > "$inv"
for p in 1 2 3; do
  mkdir -p "$tmp/claude-$p"
  printf '[[profile]]\nhost = "claude"\ndir = "%s"\n\n' "$tmp/claude-$p" >> "$inv"
done
for i in $(seq 1 "$sources"); do
  src="$tmp/sources/s$i"
  mkdir -p "$src/hooks/lib"
  for j in 1 2 3; do echo "# helper $j of source $i" > "$src/hooks/lib/h$j.sh"; done
  echo 'exit 0' > "$src/hooks/run.sh"
  cat > "$src/hooks/hooks.json" <<JSON
{"hooks": {
  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "sh \"\${CLAUDE_PLUGIN_ROOT}/hooks/run.sh\" pre $i", "timeout": 10}]}],
  "Stop": [{"hooks": [{"type": "command", "command": "sh \"\${CLAUDE_PLUGIN_ROOT}/hooks/run.sh\" stop $i", "timeout": 10}]}]
}}
JSON
  printf '[[source]]\nname = "s%s"\npath = "%s"\n\n' "$i" "$src" >> "$inv"
done
t0=$(date +%s%N)
"$bin" apply >/dev/null
t1=$(date +%s%N)
echo "first apply (wires everything): $(( (t1 - t0) / 1000000 )) ms"
profiles=$("$bin" profile list | wc -l)
if [ "$sources" -le 100 ]; then
  installed=$("$bin" status --json | python3 -c 'import json, sys; print(sum(s["state"] == "current" for s in json.load(sys.stdin)["sources"]))')
else
  # `fable status` plans each source against each profile on its own (quadratic at this size):
  # count the sources a dry run finds converged in every profile instead.
  installed=$("$bin" apply --dry-run --json | python3 -c 'import json, sys; print(sum(not s["install"]["changed"] and len(s["install"]["profiles"]) == '"$((8 + $(echo $extra_hosts | wc -w)))"' for s in json.load(sys.stdin)["sources"]))')
fi
if [ "$profiles" != "$expected_profiles" ] || [ "$installed" != "$sources" ]; then
  echo "FAIL: expected $expected_profiles profiles and $sources current sources, got $profiles and $installed" >&2
  exit 1
fi

listing() { find "$tmp" -printf '%p %s %m %i %T@ %C@\n' | sort; }
before=$(listing)
times=()
for _ in $(seq 1 "$runs"); do
  t0=$(date +%s%N)
  out=$("$bin" apply --json)
  t1=$(date +%s%N)
  case "$out" in *'"changed": false'*) ;; *) echo "apply was not a no-op: $out" >&2; exit 1;; esac
  times+=($(( (t1 - t0) / 1000 )))
done
after=$(listing)
if [ "$before" != "$after" ]; then
  echo "FAIL: a converged apply wrote to disk:" >&2
  diff <(echo "$before") <(echo "$after") >&2 || true
  exit 1
fi
median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
echo "fable apply (already current): $sources sources, $profiles profiles, $runs runs ($profile build)"
echo "median wall: $((median / 1000)).$(printf '%03d' $((median % 1000))) ms (budget $budget ms); writes: 0"
