#!/usr/bin/env bash
# `ansible-test sanity` on the fable.fable collection, Python 3.11, no containers. VENV: the
# venv holding ansible-core (run.sh's). ansible-test's per-test virtual environments and their
# requirements (from PyPI) are cached under target/ansible-test-home; its pip bootstrap, which
# it would download from ci-files.testing.ansible.com, is replaced by get_pip.py. Then the
# collection is built with ansible-galaxy.
set -euo pipefail
cd "$(dirname "$0")/../../.."
venv=${1:?usage: sanity.sh VENV}
root=$PWD
collection=contrib/ansible/ansible_collections/fable/fable
home="$root/target/ansible-test-home"
pip_version=$("$venv/bin/python" -c 'from ansible_test._internal.python_requirements import get_venv_packages as g; from types import SimpleNamespace as N; print(g(N(version="3.11"))["pip"])')
# Each test's requirements come from PyPI the first time; later runs reuse the venvs.
if [ ! -d "$home/.ansible/test/venv" ] && ! timeout 15 "$venv/bin/python" -c \
  'import urllib.request as u; u.urlopen("https://pypi.org/simple/pylint/", timeout=10).read(1)' >/dev/null 2>&1; then
  echo "ansible: ansible-test sanity skipped: PyPI is unreachable (its per-test requirements come from there)"
  exit 0
fi
mkdir -p "$home/.ansible/test/cache"
cp contrib/ansible/tests/get_pip.py "$home/.ansible/test/cache/get_pip_${pip_version//./_}.py"
# ansible-test lists the collection's files with git; a copy keeps its output (tests/output)
# out of the work tree.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ansible_collections/fable"
cp -r "$collection" "$work/ansible_collections/fable/fable"
touch "$home/gitconfig"
cd "$work/ansible_collections/fable/fable"
# No network besides PyPI: the tests that need something else are not in this list.
tests=(action-plugin-docs ansible-doc compile empty-init ignores import line-endings no-assert
  no-get-exception no-illegal-filenames no-smart-quotes pep8 pylint replace-urlopen
  runtime-metadata shebang symlinks use-argspec-type-path use-compat-six validate-modules yamllint)
if command -v shellcheck >/dev/null; then tests+=(shellcheck); fi
args=()
for t in "${tests[@]}"; do args+=(--test "$t"); done
if ! HOME="$home" PIP_CACHE_DIR="$home/pip-cache" GIT_CONFIG_GLOBAL="$home/gitconfig" GIT_CONFIG_NOSYSTEM=1 \
  PATH="$venv/bin:$PATH" timeout 900 ansible-test sanity --python 3.11 "${args[@]}" >"$work/log" 2>&1; then
  grep -v '^WARNING: Using locale' "$work/log" | tail -40 >&2
  echo "ansible: FAILED: ansible-test sanity (${tests[*]})" >&2
  exit 1
fi
echo "ansible: ansible-test sanity --python 3.11: ${#tests[@]} tests passed (${tests[*]})"
# The collection builds as Galaxy would ship it, with the modules, the filters, the role and
# the fleet_report playbook.
HOME="$home" ANSIBLE_HOME="$home/.ansible" "$venv/bin/ansible-galaxy" collection build \
  --output-path "$work" "$root/$collection" >/dev/null
tarball="$work/fable-fable-$(sed -n 's/^version: *//p' "$root/$collection/galaxy.yml").tar.gz"
listing=$(tar tzf "$tarball")
for f in plugins/modules/fable_apply.py plugins/modules/fable_status.py \
  plugins/modules/fable_report.py plugins/module_utils/fable.py plugins/filter/fleet.py \
  roles/fable/tasks/main.yml roles/fable/tasks/report.yml playbooks/fleet_report.yml meta/runtime.yml; do
  grep -qx "$f" <<<"$listing" || { echo "ansible: FAILED: $f is not in $tarball" >&2; exit 1; }
done
echo "ansible: ansible-galaxy collection build: $(basename "$tarball")"
