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
  cargo build --release --quiet --bins
  bin=$target/release/fable
else
  cargo build --quiet --bins
  bin=$target/debug/fable
fi
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac

tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
ms_of() { awk -v ns="$1" 'BEGIN { printf "%.1f", ns / 1e6 }'; }

# Times a command N times: median wall and median CPU (user + system of the process, from
# wait4), in ns; checks that its stdout contains a marker.
timed() {
  python3 - "$@" <<'PY'
import os, subprocess, sys, time
runs, marker, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
walls, cpus = [], []
for _ in range(runs):
    t = time.monotonic_ns()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    walls.append(time.monotonic_ns() - t)
    cpus.append(int((ru.ru_utime + ru.ru_stime) * 1e9))
    if os.waitstatus_to_exitcode(status) != 0 or marker.encode() not in out:
        sys.exit(f"{' '.join(cmd)}: exit {os.waitstatus_to_exitcode(status)}, no {marker!r} in {out[:300]!r}")
walls.sort(); cpus.sort()
print(walls[len(walls) // 2], cpus[len(cpus) // 2])
PY
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }

printf '%-7s %13s | %22s %13s | %22s %13s\n' files "first install" "no-op install wall/cpu" "x 1st size" "status wall/cpu" "x 1st size"
base_iw="" base_ic="" base_sw="" base_sc=""
for n in $sizes; do
  root="$tmp/n$n"
  export HOME="$root/home" FABLE_HOME="$root/home/.fable"
  unset CLAUDE_CONFIG_DIR CODEX_HOME GEMINI_CLI_HOME QWEN_HOME COPILOT_HOME OPENCODE_CONFIG_DIR FACTORY_HOME_OVERRIDE KIMI_CODE_HOME KILO_CONFIG_DIR XDG_CONFIG_HOME FABLE_INVENTORY
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
  read -r iw ic < <(timed "$runs" '"changed": false' "$bin" install "$src" --json)
  read -r sw sc < <(timed "$runs" '"state": "current"' "$bin" status "$src" --json)
  after=$(listing)
  if [ "$before" != "$after" ]; then
    echo "FAIL: a no-op install or status wrote to disk ($n files):" >&2
    diff <(echo "$before") <(echo "$after") | head -20 >&2 || true
    exit 1
  fi
  base_iw=${base_iw:-$iw} base_ic=${base_ic:-$ic} base_sw=${base_sw:-$sw} base_sc=${base_sc:-$sc}
  printf '%-7s %10s ms | %9s / %6s ms %6s/%6s | %9s / %6s ms %6s/%6s\n' "$n" "$(ms_of "$first")" \
    "$(ms_of "$iw")" "$(ms_of "$ic")" "$(ratio "$iw" "$base_iw")" "$(ratio "$ic" "$base_ic")" \
    "$(ms_of "$sw")" "$(ms_of "$sc")" "$(ratio "$sw" "$base_sw")" "$(ratio "$sc" "$base_sc")"
  rm -rf "$root"
done
echo "($bin, median of $runs runs per no-op figure, wall and CPU (user + system); ratios to the first size, same run;"
echo " the no-op installs and statuses wrote nothing; load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo "budgets: first install of 5,000 files <= 1000 ms; no-op install of 50,000 files <= 100 ms"
