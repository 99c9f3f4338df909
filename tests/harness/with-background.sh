#!/bin/sh
# Run a command while named steps run beside it in the background, then wait for them.
# make test overlaps the cold, I/O-bound image builds (debootstrap: network and disk)
# with lint and the unit tests (CPU).
#
#   with-background.sh NAME 'COMMAND' [NAME 'COMMAND' ...] -- FOREGROUND [ARG ...]
#
# A background step's output goes to $RDMA_FABRIC_BACKGROUND_LOGS/NAME.log (default
# .cache/background); when the step fails its log's last lines are printed, prefixed
# with its name. Exit status: the foreground's when it failed, else 1 when a background
# step failed, else 0; every failure is named. A failed foreground does not stop the
# background steps: they are waited for (a killed debootstrap leaves its partial root
# behind, a finished one is cached for the next run).
set -u

logs=${RDMA_FABRIC_BACKGROUND_LOGS:-.cache/background}
mkdir -p "$logs"
usage="usage: with-background.sh NAME 'COMMAND' [...] -- FOREGROUND [ARG ...]"

started=""
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    [ $# -ge 4 ] && [ "$2" != -- ] || { echo "$usage" >&2; exit 2; }
    name=$1
    log="$logs/$name.log"
    rm -f "$logs/$name.end"
    echo "with-background: $name runs in the background (log: $log)"
    (
        sh -c "$2"
        rc=$?
        date +%s >"$logs/$name.end"
        exit "$rc"
    ) >"$log" 2>&1 </dev/null &
    started="$started $name:$!:$(date +%s)"
    shift 2
done
[ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
shift

"$@"
rc=$?

failed=""
for job in $started; do
    name=${job%%:*}
    rest=${job#*:}
    pid=${rest%%:*}
    start=${rest#*:}
    waited_from=$(date +%s)
    wait "$pid"
    step_rc=$?
    now=$(date +%s)
    end=$(cat "$logs/$name.end" 2>/dev/null || echo "$now")
    took="took $((end - start)) s, waited for $((now - waited_from)) s"
    "$(dirname "$0")/phase.sh" add "$name(background)" "$((end - start))" "$step_rc"
    if [ "$step_rc" -eq 0 ]; then
        echo "with-background: $name passed ($took; log: $logs/$name.log)"
    else
        echo "with-background: $name FAILED with exit $step_rc ($took); the end of $logs/$name.log:" >&2
        tail -n 40 "$logs/$name.log" | sed "s/^/$name| /" >&2
        failed="$failed $name"
    fi
done

if [ "$rc" -ne 0 ]; then
    echo "with-background: $* failed with exit $rc" >&2
    exit "$rc"
fi
if [ -n "$failed" ]; then
    echo "with-background: background step(s) failed:$failed" >&2
    exit 1
fi
