#!/bin/sh
# Issue 37's 2 TB SSD through the whole stack: `--state seq-filled` of the whole drive, then
# 60 s of verified 4 KiB random writes (verify=crc32c). Prints peak RSS, wall and CPU time and
# the verify result (targets: <= 1 GB, <= 3 minutes, passing). Takes minutes: not in CI
# (crates/runner/tests/it/fast_state.rs checks the state on small drives).
# The drive is the stock usb3-uas-ssd stack's ssd-sata2 with 64 times its blocks per plane and
# 2 000 000 000 000 bytes of user space (the NAND geometry and timings unchanged).
# Usage: bench/ssd-2tb.sh [RUNTIME] [STORLAB]
#   RUNTIME  seconds of the measured job (default 60)
#   STORLAB  binary to time (default: target/release/storlab, built first), e.g. an older build
set -eu
cd "$(dirname "$0")/.."
runtime=${1:-60}
bin=${2:-}
if [ -z "$bin" ]; then
    cargo build --quiet --release -p storlab
    bin=target/release/storlab
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/profiles/drives" "$dir/profiles/stacks"
sed -e 's/^blocks_per_plane = .*/blocks_per_plane = 131072/' \
    -e 's/^user_capacity_bytes = .*/user_capacity_bytes = 2000000000000/' \
    -e 's/^description = .*/description = "ssd-sata2 scaled to 2 TB (bench\/ssd-2tb.sh)"/' \
    profiles/drives/ssd-sata2.toml >"$dir/profiles/drives/ssd-sata2-2tb.toml"
sed -e 's/^drive = .*/drive = "ssd-sata2-2tb"/' \
    -e 's/^description = .*/description = "usb3-uas-ssd with a 2 TB drive (bench\/ssd-2tb.sh)"/' \
    profiles/stacks/usb3-uas-ssd.toml >"$dir/profiles/stacks/usb3-uas-ssd-2tb.toml"
status=0
/usr/bin/time -f "%M %e %U %S" -o "$dir/time" "$bin" run --no-db --profiles "$dir/profiles" \
    --target sim:usb3-uas-ssd-2tb --state seq-filled --rw=randwrite --bs=4k \
    --runtime="$runtime" --time_based --verify=crc32c >"$dir/out" 2>&1 || status=$?
grep -E "seq-filled:|randwrite|verify" "$dir/out" || true
if [ "$status" -eq 0 ] && ! grep -q "verify failed" "$dir/out"; then
    verdict=passed
else
    verdict="FAILED (exit $status)"
fi
read -r rss_kb wall user sys <"$dir/time"
awk -v r="$rss_kb" -v w="$wall" -v u="$user" -v s="$sys" -v v="$verdict" 'BEGIN {
    printf "2 TB SSD, seq-filled + verified 4 KiB random writes: peak RSS %.0f MB, %.1f s wall, %.1f s CPU (%.1f user + %.1f sys), verify %s\n",
        r * 1024 / 1e6, w, u + s, u, s, v
}'
[ "$verdict" = passed ]
