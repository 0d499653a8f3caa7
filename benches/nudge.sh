#!/bin/sh
# Staleness nudge benchmark (docs/design.md, "Budgets": staleness check of a 2,000-file source with a
# warm stat cache <= 10 ms). Builds the release example `snapshot/examples/staleness.rs`, which
# drives `fable_snapshot::staleness::nudge_for` exactly as the evaluator's SessionStart handler
# does (from the generation's `bin/fable-hook` path), and reports in-process timings of the check
# plus the wall time of whole processes.
#
# Usage: benches/nudge.sh [NFILES]   (default 2000; honours CARGO_TARGET_DIR)
set -eu
cd "$(dirname "$0")/.."
n=${1:-2000}
cargo build --release --quiet -p fable-snapshot --example staleness
bin=${CARGO_TARGET_DIR:-target}/release/examples/staleness
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
exe=$("$bin" setup "$tmp" "$n")
echo "source: $n files; evaluator path: $exe"

echo "== warm stat cache, source current (200 checks in one process)"
"$bin" check "$exe" 200

echo "== whole process, 50 runs (process start + one check), source current"
start=$(date +%s%N)
i=0
while [ $i -lt 50 ]; do
	"$bin" check "$exe" 1 >/dev/null
	i=$((i + 1))
done
end=$(date +%s%N)
echo "mean wall per process: $(((end - start) / 50000)) us"

echo "== one file edited in place since the sync (re-hashes only that file)"
echo "# edit" >>"$tmp/src/hooks/lib/d07/f00700.py"
"$bin" check "$exe" 200

echo "== one file saved by rename since the sync (directory changed, same names)"
cp "$tmp/src/hooks/lib/d08/f00800.py" "$tmp/src/hooks/lib/d08/.tmp"
echo "# saved" >>"$tmp/src/hooks/lib/d08/.tmp"
mv "$tmp/src/hooks/lib/d08/.tmp" "$tmp/src/hooks/lib/d08/f00800.py"
"$bin" check "$exe" 200

echo "== one file added since the sync (directory changed: full check, lists the source set)"
echo "# new" >"$tmp/src/hooks/lib/d07/new.py"
"$bin" check "$exe" 50


echo "== fable-hook session-start end to end (release fable as the source's evaluator, $n files)"
cargo build --release --quiet --bin fable
fable=$(cd "${CARGO_TARGET_DIR:-target}/release" && pwd)/fable
home="$tmp/home"
unset CLAUDE_CONFIG_DIR CODEX_HOME GEMINI_CLI_HOME QWEN_HOME COPILOT_HOME OPENCODE_CONFIG_DIR FACTORY_HOME_OVERRIDE KIMI_CODE_HOME XDG_CONFIG_HOME FABLE_INVENTORY
mkdir -p "$home" "$tmp/ev/hooks/lib" "$tmp/ev/bin" "$tmp/project"
i=0
while [ $i -lt "$n" ]; do
	echo "# $i" >"$tmp/ev/hooks/lib/m$i.py"
	i=$((i + 1))
done
cp "$fable" "$tmp/ev/bin/fable-hook"
printf 'include = ["bin"]\n' >"$tmp/ev/fable.toml"
cat >"$tmp/ev/hooks/hooks.json" <<'JSON'
{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "\"${FABLE_ROOT}/bin/fable-hook\" session-start --host ${FABLE_HOST}"}]}]}}
JSON
HOME="$home" FABLE_HOME="$home/.fable" "$fable" install "$tmp/ev" >/dev/null
hook=$(readlink -f "$home/.fable/sources"/*/current)/bin/fable-hook
payload="{\"hook_event_name\":\"SessionStart\",\"cwd\":\"$tmp/project\"}"
for state in current stale; do
	if [ "$state" = stale ]; then echo "# edit" >>"$tmp/ev/hooks/lib/m7.py"; fi
	start=$(date +%s%N)
	i=0
	while [ $i -lt 50 ]; do
		echo "$payload" | "$hook" session-start --host claude >"$tmp/out"
		i=$((i + 1))
	done
	end=$(date +%s%N)
	echo "source $state: mean wall per fable-hook session-start: $(((end - start) / 50000)) us; output: $(head -c 120 "$tmp/out")"
done
