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
cargo build --release --quiet --bins
fable=$(cd "${CARGO_TARGET_DIR:-target}/release" && pwd)/fable
home="$tmp/home"
unset CLAUDE_CONFIG_DIR CODEX_HOME GEMINI_CLI_HOME QWEN_HOME COPILOT_HOME OPENCODE_CONFIG_DIR FACTORY_HOME_OVERRIDE KIMI_CODE_HOME KILO_CONFIG_DIR XDG_CONFIG_HOME FABLE_INVENTORY
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

echo "== SessionStart with 30 installed sources and the watch over every host file, vs the spawn floor"
cargo build --release --quiet -p fable-payload --example spawn_floor
floor=$(cd "${CARGO_TARGET_DIR:-target}/release/examples" && pwd)/spawn_floor
home2="$tmp/home2"
mkdir -p "$home2"
for d in .claude .codex .gemini .qwen .cursor .factory .augment .codeium/windsurf .kimi-code .copilot .config/opencode; do mkdir -p "$home2/$d"; done
HOME="$home2" FABLE_HOME="$home2/.fable" "$fable" install >/dev/null
i=0
while [ $i -lt 30 ]; do
	s="$tmp/src30/s$i"
	mkdir -p "$s/hooks/lib"
	j=0
	while [ $j -lt 20 ]; do echo "# $j" >"$s/hooks/lib/m$j.py"; j=$((j + 1)); done
	printf '{"hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "python3 ${FABLE_ROOT}/hooks/lib/m0.py s%s"}]}]}}\n' "$i" >"$s/hooks/hooks.json"
	i=$((i + 1))
done
sleep 1
for s in "$tmp"/src30/s*; do HOME="$home2" FABLE_HOME="$home2/.fable" "$fable" install "$s" >/dev/null; done
hook=$(readlink -f "$home2/.fable/sources/default/current")/bin/fable-hook
nfiles=$(grep -c '"path"' "$home2/.fable/watch.json")
nsrc=$(ls "$home2/.fable/sources" | wc -l)
echo "sources: $nsrc; watched host files: $nfiles"
payload="{\"hook_event_name\":\"SessionStart\",\"cwd\":\"$tmp/project\"}"
echo "$payload" | HOME="$home2" "$hook" session-start --host claude >/dev/null 2>&1
ev=0
fl=0
r=0
while [ $r -lt 5 ]; do
	start=$(date +%s%N)
	i=0
	while [ $i -lt 40 ]; do echo "$payload" | HOME="$home2" "$floor" >/dev/null; i=$((i + 1)); done
	mid=$(date +%s%N)
	i=0
	while [ $i -lt 40 ]; do echo "$payload" | HOME="$home2" "$hook" session-start --host claude >"$tmp/out" 2>/dev/null; i=$((i + 1)); done
	end=$(date +%s%N)
	fl=$((fl + mid - start))
	ev=$((ev + end - mid))
	r=$((r + 1))
done
echo "spawn floor: $((fl / 200000)) us; session-start: $((ev / 200000)) us; ratio x$(awk "BEGIN{printf \"%.2f\", $ev / $fl}") (budget 3x); output: $(head -c 120 "$tmp/out")"
