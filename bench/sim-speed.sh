#!/bin/sh
# Simulator speed: simulated seconds per wall second and commands per wall second.
# Usage: bench/sim-speed.sh [STACK] [IOS] [CASE]   (default: usb3-uas-ssd, 2 000 000 I/Os, every case;
# CASE picks cases by substring: 4k-randread, 4k-randwrite, 1m-seqread)
set -eu
cd "$(dirname "$0")/.."
exec cargo run --quiet --release -p storlab-sim --example sim_speed -- "$@"
