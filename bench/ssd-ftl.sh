#!/bin/sh
# SSD model bench: mapping-state size of a 128 GB drive and the time to simulate 10 GB of 4 KiB
# random writes (fresh and after a full fill, drive alone and through the SATA stack).
# Usage: bench/ssd-ftl.sh [GB] [SCALE]   (SCALE multiplies the drive: 16 gives 2 TB, drive alone)
set -eu
cd "$(dirname "$0")/.."
exec cargo run --quiet --release -p storlab-sim --example ssd_bench -- "${1:-10}" ${2:+"$2"}
