#!/usr/bin/env bash
# Type-checks and lints the workspace for the two macOS targets on Linux (docs/design.md,
# "Portability"): `cargo clippy --workspace --all-targets --target <apple> -- -D warnings`.
# Nothing is linked or run; a target that cannot be installed is skipped with one line.
#
# ring's build script compiles its C and assembly for the target even for a check, so it needs
# a C compiler that targets Apple: clang (any clang is a cross compiler). There is no macOS SDK
# here, so the compile uses only clang's own freestanding headers (-ffreestanding -nostdlibinc)
# and ring's own switch for building without a C library (RING_CORE_NOSTDLIBINC), plus the one
# SDK header ring includes on Apple targets (.ci/apple-check/TargetConditionals.h). The objects
# are archived and never linked.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

find_clang() {
  local c
  for c in clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14; do
    if command -v "$c" >/dev/null 2>&1; then
      echo "$c"
      return 0
    fi
  done
  return 1
}

cc=$(find_clang) || {
  timeout 300 sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends clang' \
    >/dev/null 2>&1 || true
  cc=$(find_clang)
} || {
  echo "apple-check: skipped, no clang for ring's build script (apt-get install clang)"
  exit 0
}

for target in aarch64-apple-darwin x86_64-apple-darwin; do
  if ! rustup target list --installed 2>/dev/null | grep -qx "$target" \
    && ! timeout 300 rustup target add "$target" >/dev/null 2>&1; then
    echo "apple-check: skipped $target, the target cannot be installed (rustup target add $target)"
    continue
  fi
  var=${target//-/_}
  export "CC_$var=$cc"
  export "CFLAGS_$var=-ffreestanding -nostdlibinc -DRING_CORE_NOSTDLIBINC=1 -I$PWD/.ci/apple-check"
  echo "apple-check: cargo clippy --target $target"
  cargo clippy --locked --workspace --all-targets --target "$target" -- -D warnings
done
