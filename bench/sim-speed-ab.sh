#!/bin/sh
# Simulator speed, A against B: CPU time (perf stat task-clock) of two sim_speed binaries run
# alternately, ROUNDS times each, sorted per binary; read the smallest values, the least
# disturbed by other work on the machine. Instruction counts (callgrind) miss what this
# catches: stalls, and calls into libc's AVX-512 memset/memmove that cost far more than
# their count (docs/simulator.md, Speed).
# Usage: bench/sim-speed-ab.sh A_BINARY B_BINARY [STACK] [IOS] [CASE] [ROUNDS]
#   e.g. build each tree state with `cargo build --release -p storlab-sim --example sim_speed`,
#   copy target/release/examples/sim_speed aside, then compare the copies.
set -eu
a=$1
b=$2
stack=${3:-usb3-uas-ssd}
ios=${4:-1000000}
case=${5:-4k-randread}
rounds=${6:-7}
command -v perf >/dev/null 2>&1 || { echo "sim-speed-ab: needs perf (linux-perf)" >&2; exit 2; }
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
i=0
while [ "$i" -lt "$rounds" ]; do
    for bin in "$a" "$b"; do
        ms=$(perf stat -x, -e task-clock "$bin" "$stack" "$ios" "$case" 2>&1 >/dev/null |
            grep task-clock | cut -d, -f1)
        echo "$bin $ms" >>"$tmp"
    done
    i=$((i + 1))
done
echo "$stack $case, $ios I/Os, task-clock ms per run, sorted:"
for bin in "$a" "$b"; do
    printf '%s:' "$bin"
    grep -F "$bin " "$tmp" | cut -d' ' -f2 | sort -n | awk '{printf " %d", $1} END {print ""}'
done
