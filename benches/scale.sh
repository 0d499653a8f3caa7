#!/usr/bin/env bash
# Benchmark: how install and status scale with the size of a source (docs/design.md, "Budgets").
# For sources of 500, 5,000 and 50,000 files (100 files per directory, one profile):
#   - first install into an empty FABLE_HOME (hash, copy, one syncfs, switch): budget 1 s at 5,000;
#   - no-op `fable install` (everything current) and `fable status`: median of N runs; budget
#     100 ms at 50,000, and the ratio to the 500-file figure (measured in this same run: the
#     machines this runs on are noisy, ratios within one run are what to compare);
#   - the no-op install writes nothing (a listing of FABLE_HOME and the profile with sizes,
#     modes and nanosecond mtimes is identical before and after).
# Before the no-op runs one file is edited and installed (as a user does), so the tree cache
# holds settled entries: an install right after the files were created records the files
# written within its racy margin (100 ms) as racy, and they are re-hashed until a later install
# records them clean (docs/design.md, "On disk").
#
#   bash benches/scale.sh                 # release build; 500, 5000, 50000 files
#   bash benches/scale.sh --sizes "500 5000"
#   bash benches/scale.sh --smoke         # debug build, 200 and 1000 files, 3 runs (CI)
#   FABLE_BIN=path/to/fable bash benches/scale.sh   # time that binary (no build)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes="500 5000 50000"
runs=15
profile=release
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) profile=debug; sizes="200 1000"; runs=3 ;;
    --sizes) sizes="$2"; shift ;;
    --runs) runs="$2"; shift ;;
  esac
  shift
done
target=${CARGO_TARGET_DIR:-target}
if [ -n "${FABLE_BIN:-}" ]; then
  bin=$FABLE_BIN # a binary built already (no build step)
elif [ "$profile" = release ]; then
  cargo build --release --quiet --bin fable
  bin=$target/release/fable
else
  cargo build --quiet --bin fable
  bin=$target/debug/fable
fi
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac

tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
ms_of() { awk -v ns="$1" 'BEGIN { printf "%.1f", ns / 1e6 }'; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

printf '%-8s %14s %14s %14s %12s %12s\n' files "first install" "no-op install" status "install x" "status x"
base_install=""
base_status=""
for n in $sizes; do
  root="$tmp/n$n"
  export HOME="$root/home" FABLE_HOME="$root/home/.fable"
  unset CLAUDE_CONFIG_DIR CODEX_HOME
  mkdir -p "$HOME/.claude"
  src="$root/plugin"
  python3 - "$src" "$n" <<'PY'
import os, sys
src, n = sys.argv[1], int(sys.argv[2])
os.makedirs(os.path.join(src, "hooks"))
with open(os.path.join(src, "hooks", "hooks.json"), "w") as f:
    f.write('{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", '
            '"command": "python3 \\"${CLAUDE_PLUGIN_ROOT}/hooks/guard.py\\"", "timeout": 10}]}]}}\n')
with open(os.path.join(src, "hooks", "guard.py"), "w") as f:
    f.write("import sys; sys.exit(0)\n")
for i in range(n - 2):
    d = os.path.join(src, "lib", f"d{i // 100:04d}")
    if i % 100 == 0:
        os.makedirs(d)
    with open(os.path.join(d, f"m{i:06d}.py"), "w") as f:
        f.write(f"# module {i}\nVALUE = {i}\n")
PY
  t0=$(date +%s%N)
  "$bin" install "$src" >/dev/null
  t1=$(date +%s%N)
  first=$((t1 - t0))
  echo "# edited" >>"$src/lib/d0000/m000000.py"
  "$bin" install "$src" >/dev/null
  listing() { find "$HOME" -printf '%p %s %m %T@\n' | sort; }
  before=$(listing)
  installs=()
  statuses=()
  for _ in $(seq 1 "$runs"); do
    t0=$(date +%s%N)
    out=$("$bin" install "$src" --json)
    t1=$(date +%s%N)
    case "$out" in *'"changed": false'*) ;; *) echo "install was not a no-op: $out" >&2; exit 1 ;; esac
    installs+=($((t1 - t0)))
    t0=$(date +%s%N)
    st=$("$bin" status "$src" --json)
    t1=$(date +%s%N)
    case "$st" in *'"state": "current"'*) ;; *) echo "status is not current: $st" >&2; exit 1 ;; esac
    statuses+=($((t1 - t0)))
  done
  after=$(listing)
  if [ "$before" != "$after" ]; then
    echo "FAIL: a no-op install or status wrote to disk ($n files):" >&2
    diff <(echo "$before") <(echo "$after") | head -20 >&2 || true
    exit 1
  fi
  mi=$(printf '%s\n' "${installs[@]}" | median)
  ms=$(printf '%s\n' "${statuses[@]}" | median)
  base_install=${base_install:-$mi}
  base_status=${base_status:-$ms}
  printf '%-8s %11s ms %11s ms %11s ms %11sx %11sx\n' "$n" "$(ms_of "$first")" "$(ms_of "$mi")" "$(ms_of "$ms")" \
    "$(awk -v a="$mi" -v b="$base_install" 'BEGIN { printf "%.2f", a / b }')" \
    "$(awk -v a="$ms" -v b="$base_status" 'BEGIN { printf "%.2f", a / b }')"
  rm -rf "$root"
done
echo "($bin, median of $runs runs per no-op figure; ratios to the first size, same run; the no-op installs and statuses wrote nothing)"
echo "budgets: first install of 5,000 files <= 1000 ms; no-op install of 50,000 files <= 100 ms"
