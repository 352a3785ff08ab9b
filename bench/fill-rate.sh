#!/bin/sh
# Fast state preparation: GB (10^9 bytes) of simulated writes per wall second and per CPU second
# of `--state seq-filled` over SIZE of a simulated stack (the measured job after it is one 4 KiB
# write; process start and profile loading are included).
# Usage: bench/fill-rate.sh [STACK] [SIZE] [STORLAB]
#   STACK   default lucidport/caviarblack-uas-gen2 (2 TB HDD)
#   SIZE    default 64g (IEC suffixes: 64g = 64 GiB)
#   STORLAB binary to time (default: target/release/storlab, built first), e.g. an older build
set -eu
cd "$(dirname "$0")/.."
stack=${1:-lucidport/caviarblack-uas-gen2}
size=${2:-64g}
bin=${3:-}
if [ -z "$bin" ]; then
    cargo build --quiet --release -p storlab
    bin=target/release/storlab
fi
bytes=$(numfmt --from=iec "$(echo "$size" | tr 'a-z' 'A-Z')")
times=$(mktemp)
trap 'rm -f "$times"' EXIT
/usr/bin/time -f "%e %U %S" -o "$times" "$bin" run --no-db --target "sim:$stack" --size="$size" \
    --state seq-filled --rw=write --bs=4k --number_ios=1 >/dev/null 2>&1
read -r wall user sys <"$times"
awk -v b="$bytes" -v w="$wall" -v u="$user" -v s="$sys" -v st="$stack" -v sz="$size" 'BEGIN {
    printf "%s %s: %.2f s wall, %.2f s CPU: %.1f GB/s wall, %.1f GB/s CPU\n",
        st, sz, w, u + s, b / 1e9 / w, b / 1e9 / (u + s)
}'
