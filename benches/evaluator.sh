#!/usr/bin/env bash
# Benchmark of the bundled evaluator (docs/design.md, "Budgets"): `fable-hook pre-tool-use` in a project
# with 50 evidence records and 20 cards, median wall per process and peak RSS, side by side with
# a Python 3 hook doing the same discovery, state read and mutation (payload/BENCH.md).
#   bash benches/evaluator.sh            # full run (300 processes per row)
#   bash benches/evaluator.sh --smoke    # CI: 20 processes per row; checks correctness only
#   bash benches/evaluator.sh --iters 1000
# Never fails on timing; exits non-zero only if a hook gives a wrong result.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-$PWD/target}"
# The smoke run checks results only: the debug build the test suite made is enough (and spares
# CI a release build with LTO).
if [[ " $* " == *" --smoke "* ]]; then
  cargo build --quiet --bin fable
  exec cargo bench --quiet --profile dev -p fable-payload --bench hook_latency -- --fable "$target/debug/fable" "$@"
fi
cargo build --release --quiet --bin fable
exec cargo bench --quiet -p fable-payload --bench hook_latency -- --fable "$target/release/fable" "$@"
