#!/usr/bin/env bash
# The fable.fable Ansible collection's test: ansible-core 2.19 from PyPI in a venv cached in
# target/ansible-venv, the role and modules against localhost in a sandbox HOME (run.py),
# then a fleet of 10 simulated machines with mixed drift converged by one run and reported
# (fleet.py; `--machines 100` for the scale figure in README.md), then `ansible-test sanity`
# on the collection (sanity.sh). Skips with one line where PyPI is
# unreachable and ansible-core is not installed yet. FABLE_BIN: the fable binary to test;
# FABLE_ANSIBLE_VENV: another venv (default target/ansible-venv).
set -euo pipefail
cd "$(dirname "$0")/../../.."
: "${FABLE_BIN:?set FABLE_BIN to the fable binary (cargo build: target/debug/fable)}"
venv="${FABLE_ANSIBLE_VENV:-$PWD/target/ansible-venv}"
want='ansible-core>=2.19,<2.20'
have() {
  "$venv/bin/python" -c 'import ansible.release as r, sys; sys.exit(not r.__version__.startswith("2.19."))' 2>/dev/null
}
if ! have; then
  py=""
  for c in python3.11 python3.12 python3.13 python3; do
    if command -v "$c" >/dev/null && "$c" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
      py=$(command -v "$c"); break
    fi
  done
  if [ -z "$py" ]; then
    echo "ansible: skipped: ansible-core 2.19 needs Python 3.11 or later, none found"; exit 0
  fi
  if ! timeout 15 "$py" -c 'import urllib.request as u; u.urlopen("https://pypi.org/simple/ansible-core/", timeout=10).read(1)' >/dev/null 2>&1; then
    echo "ansible: skipped: PyPI (https://pypi.org) is unreachable, so ansible-core cannot be installed"
    exit 0
  fi
  rm -rf "$venv"
  "$py" -m venv "$venv"
  # pip's cache and configuration come from a home inside target/, never the real one.
  mkdir -p target/ansible-test-home
  HOME="$PWD/target/ansible-test-home" PIP_CACHE_DIR="$PWD/target/ansible-test-home/pip-cache" \
    "$venv/bin/pip" install -q --disable-pip-version-check "$want"
  have || { echo "ansible: FAILED: $want did not install into $venv" >&2; exit 1; }
fi
"$venv/bin/python" contrib/ansible/tests/run.py
"$venv/bin/python" contrib/ansible/tests/fleet.py --machines 10
bash contrib/ansible/tests/sanity.sh "$venv"
