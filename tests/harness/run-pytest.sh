#!/bin/sh
# Run a pytest suite; "no tests collected" (exit 5) is a failure, said plainly.
set -u
suite=${1:?usage: run-pytest.sh DIR [pytest args]}
shift
python -m pytest -c tests/pytest.ini "$suite" "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
    echo "run-pytest: no tests were collected in $suite: that is a failure, not a pass" >&2
    exit 1
fi
exit "$rc"
