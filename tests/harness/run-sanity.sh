#!/bin/sh
# ansible-test sanity on the rdma.fabric collection, every test, from the pinned venv.
# ansible-test puts pip into each sanity venv with a script it downloads from ansible's
# CI file server, which is not reachable here: tests/harness/get_pip.py takes its place
# in ansible-test's cache. The sanity venvs themselves (pinned by ansible-test) are
# cached in ~/.ansible/test/venv after the first run.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
python="$repo/.venv/bin/python"
pip_version=$("$python" - <<'PY'
import inspect
from ansible_test._internal import python_requirements as r
source = inspect.getsource(r.get_venv_packages)
print(source.split("pip='", 1)[1].split("'", 1)[0])
PY
)
cache="$HOME/.ansible/test/cache"
mkdir -p "$cache"
sed "s|^PINNED_PYTHON = \"\"|PINNED_PYTHON = \"$python\"|" "$repo/tests/harness/get_pip.py" \
    >"$cache/get_pip_$(echo "$pip_version" | tr . _).py"
# The import test finds the collections rdma.fabric imports from (ansible.netcommon for
# the MLNX-OS cliconf/terminal plugins, and its dependency ansible.utils) only beside it,
# in the same ansible_collections tree: link the pinned venv's copies there for the run.
deps="$repo/collections/ansible_collections/ansible"
site=$("$python" -c 'import ansible_collections.ansible.netcommon as n, os; print(os.path.dirname(os.path.dirname(n.__path__[0])))')
mkdir -p "$deps"
for name in netcommon utils; do ln -sfn "$site/ansible/$name" "$deps/$name"; done
trap 'rm -f "$deps/netcommon" "$deps/utils"; rmdir "$deps" 2>/dev/null || true' EXIT
cd "$repo/collections/ansible_collections/rdma/fabric"
"$repo/.venv/bin/ansible-test" sanity --python 3.11 --color no "$@"
