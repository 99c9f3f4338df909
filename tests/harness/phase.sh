#!/bin/sh
# Phase times for make test: what each phase of a run costs, printed at
# the end of the run whether it passed or not, so a slow phase is seen before CI's limit.
#
#   phase.sh run NAME COMMAND [ARG ...]   run COMMAND, append "NAME SECONDS RC" to the log
#   phase.sh add NAME SECONDS RC          append a phase measured elsewhere (background steps)
#   phase.sh table                        print the log as a table with the total wall time
#   phase.sh reset                        start a new log
#
# The log is $RDMA_FABRIC_PHASE_LOG (default .cache/phase-times); without it set, `run`
# only runs the command and `add` does nothing (with-background.sh outside make test).
set -u
log=${RDMA_FABRIC_PHASE_LOG:-}

record() {
    [ -n "$log" ] || return 0
    mkdir -p "$(dirname "$log")"
    printf '%s %s %s\n' "$1" "$2" "$3" >>"$log"
}

case ${1:-} in
run)
    [ $# -ge 3 ] || { echo "usage: phase.sh run NAME COMMAND [ARG ...]" >&2; exit 2; }
    name=$2
    shift 2
    start=$(date +%s)
    "$@"
    rc=$?
    record "$name" "$(($(date +%s) - start))" "$rc"
    exit "$rc"
    ;;
add)
    [ $# -eq 4 ] || { echo "usage: phase.sh add NAME SECONDS RC" >&2; exit 2; }
    record "$2" "$3" "$4"
    ;;
reset)
    [ -n "$log" ] || { echo "phase.sh: RDMA_FABRIC_PHASE_LOG is not set" >&2; exit 2; }
    mkdir -p "$(dirname "$log")"
    : >"$log"
    date +%s >"$log.start"
    ;;
table)
    [ -n "$log" ] && [ -f "$log" ] || { echo "phase.sh: no phase log" >&2; exit 2; }
    start=$(cat "$log.start" 2>/dev/null || date +%s)
    echo "=== make test phase times (background phases overlap the foreground)"
    awk '{ printf "  %-22s %6d s  %5.1f min  %s\n", $1, $2, $2 / 60, ($3 == 0 ? "ok" : "FAILED (exit " $3 ")") }' "$log"
    wall=$(($(date +%s) - start))
    printf '  %-22s %6d s  %5.1f min\n' "wall" "$wall" "$(awk "BEGIN { print $wall / 60 }")"
    ;;
*)
    echo "usage: phase.sh run|add|table|reset ..." >&2
    exit 2
    ;;
esac
