#!/usr/bin/env bash
# Benchmark of the rule packs (payload/BENCH.md, "Both packs"): guards and selector-development
# enabled; `fable-hook pre-tool-use` on calls no rule concerns (budget 2 ms median) and the
# inertness guard on a 2,000-line TSX component (budget 20 ms median).
#   bash benches/packs.sh            # full run (300 processes per row)
#   bash benches/packs.sh --smoke    # CI: 20 processes per row; checks correctness only
#   bash benches/packs.sh --iters 1000
# Never fails on timing; exits non-zero only if a hook gives a wrong result.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-$PWD/target}"
if [[ " $* " == *" --smoke "* ]]; then
  cargo build --quiet --bins
  exec cargo bench --quiet --profile dev -p fable-payload --bench packs_latency -- --fable "$target/debug/fable" "$@"
fi
cargo build --release --quiet --bins
exec cargo bench --quiet -p fable-payload --bench packs_latency -- --fable "$target/release/fable" "$@"
