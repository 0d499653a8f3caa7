#!/usr/bin/env bash
# The layering the design promises (docs/design.md, "Layering"), checked on the dependency
# graph: the evaluator never pulls in the installer or gix, git plumbing never depends on the
# operations, the host vocabulary has no I/O dependencies, the bounded-child helper depends on
# libc and thiserror only, no library uses anyhow or clap, and no library draws on a terminal
# (progress and prompts are the binary's: src/term/), and installer/src has no file circle
# (.ci/circles.py).
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
deps() { cargo tree --locked -q -p "$1" -e normal --prefix none --format '{p}' | awk '{print $1}' | sort -u; }
forbid() {
  local crate=$1; shift
  local have; have=$(deps "$crate")
  for bad in "$@"; do
    if grep -qx "$bad" <<<"$have"; then
      echo "layering: $crate depends on $bad (cargo tree -p $crate -i $bad)"; fail=1
    fi
  done
}
for lib in fable-hosts fable-process fable-snapshot fable-git fable-installer fable-doctor fable-payload; do
  forbid "$lib" anyhow clap indicatif dialoguer console ctrlc
done
forbid fable-payload fable-installer fable-git fable-doctor gix reqwest rustls hyper ureq
forbid fable-git fable-installer fable-doctor
forbid fable-snapshot fable-installer fable-git fable-doctor fable-payload
forbid fable-installer fable-doctor fable-payload
# The host vocabulary: serde and serde_json only.
extra=$(deps fable-hosts | grep -vxE 'fable-hosts|serde|serde_core|serde_derive|serde_json|proc-macro2|quote|syn|unicode-ident|itoa|memchr|ryu|indexmap|equivalent|hashbrown|foldhash|zmij' || true)
if [ -n "$extra" ]; then echo "layering: fable-hosts depends on more than serde_json: $extra"; fail=1; fi
# The bounded-child helper (payload, installer and doctor use it): libc and thiserror only.
extra=$(deps fable-process | grep -vxE 'fable-process|libc|thiserror|thiserror-impl|proc-macro2|quote|syn|unicode-ident' || true)
if [ -n "$extra" ]; then echo "layering: fable-process depends on more than libc and thiserror: $extra"; fail=1; fi
# No file circle inside the installer: each module owns its error type, data flows one way.
if ! out=$(python3 .ci/circles.py installer/src); then echo "layering: file circle in installer/src:"; echo "$out"; fail=1; fi
[ "$fail" = 0 ] && echo "layering: ok"
exit "$fail"
