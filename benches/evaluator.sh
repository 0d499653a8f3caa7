#!/usr/bin/env bash
# Benchmarks of the bundled evaluator (docs/design.md, "Budgets"):
#  1. `fable-hook pre-tool-use` in a project with 50 evidence records and 20 cards, median wall
#     per process and peak RSS, side by side with a Python 3 hook doing the same discovery,
#     state read and mutation (payload/BENCH.md);
#  2. every event (pre-tool-use, post-tool-use, stop, session-start) of the installed bundled
#     evaluator beside an empty Rust binary's spawn, interleaved in one run, and two 1 MiB
#     payloads (one letter; source text with escapes) beside a small one
#     (payload/benches/spawn_floor.rs).
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
  cargo build --quiet --bins
  cargo build --quiet -p fable-payload --example spawn_floor
  cargo bench --quiet --profile dev -p fable-payload --bench hook_latency -- --fable "$target/debug/fable" "$@"
  exec cargo bench --quiet --profile dev -p fable-payload --bench spawn_floor -- --fable "$target/debug/fable" \
    --floor "$target/debug/examples/spawn_floor" "$@"
fi
cargo build --release --quiet --bins
cargo build --release --quiet -p fable-payload --example spawn_floor
cargo bench --quiet -p fable-payload --bench hook_latency -- --fable "$target/release/fable" "$@"
exec cargo bench --quiet -p fable-payload --bench spawn_floor -- --fable "$target/release/fable" \
  --floor "$target/release/examples/spawn_floor" "$@"
