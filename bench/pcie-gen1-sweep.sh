#!/bin/sh
# What the uPD720200 card's PCIe read transactions do to the LucidPort stacks when the card moves
# from a Gen2 to a Gen1 slot, for a given number of reads in flight and root-complex read latency
# (issue 18 item 3; docs/simulator.md, PCIe). Prints CrystalDiskMark-style 1 MiB QD1 sequential
# read and write MB/s per stack, Gen2 then Gen1, and what Gen1 keeps of Gen2.
# Usage: bench/pcie-gen1-sweep.sh READS_IN_FLIGHT GEN2_READ_LATENCY_NS [GEN1_READ_LATENCY_NS]
# (the shipped profiles: 1 500 840, ADR 0051; GEN1_READ_LATENCY_NS defaults to GEN2_READ_LATENCY_NS).
set -eu
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 READS_IN_FLIGHT GEN2_READ_LATENCY_NS [GEN1_READ_LATENCY_NS]" >&2; exit 2; }
reads_in_flight=$1
gen2_latency_ns=$2
gen1_latency_ns=${3:-$2}
cargo build --quiet --release -p storlab
storlab=target/release/storlab
profiles=$(mktemp -d)
trap 'rm -rf "$profiles"' EXIT
mkdir "$profiles/stacks"

mb_s() { # STACK RW
    "$storlab" run --no-db --profiles "$profiles" --target "sim:$1" --rw="$2" --bs=1M \
        --iodepth=1 --size=512M 2>&1 | sed -n 's/.*job done: [0-9]* IOPS, \([0-9.]*\) MB\/s.*/\1/p'
}

printf '%-16s %8s %8s %8s %8s %9s %10s\n' stack g2-read g2-write g1-read g1-write read-kept write-kept
for drive in "caviarblack wd-caviar-black-2tb" "x25e intel-x25e-32gb"; do
    set -- $drive
    drive_name=$1 drive_profile=$2
    for transport in "uas win7-mcci-uas" "bot win7-msft-bot"; do
        set -- $transport
        transport_name=$1 host=$2
        for generation in 2 1; do
            latency_ns=$gen2_latency_ns
            [ "$generation" = 1 ] && latency_ns=$gen1_latency_ns
            cat > "$profiles/stacks/sweep-$drive_name-$transport_name-gen$generation.toml" <<EOT
description = "pcie-gen1-sweep: $drive_name $transport_name, Gen$generation slot"
host = "$host"
controller = "renesas-upd720200"
usb_link = "usb3-ss"
bridge = "lucidport-usb300"
sata_link = "sata-3g"
drive = "$drive_profile"

[overrides.controller.pcie]
generation = $generation
outstanding_read_requests = $reads_in_flight
read_latency_ns = $latency_ns
EOT
        done
        stack=sweep-$drive_name-$transport_name
        r2=$(mb_s "$stack-gen2" read) w2=$(mb_s "$stack-gen2" write)
        r1=$(mb_s "$stack-gen1" read) w1=$(mb_s "$stack-gen1" write)
        awk -v s="$drive_name-$transport_name" -v r2="$r2" -v w2="$w2" -v r1="$r1" -v w1="$w1" \
            'BEGIN { printf "%-16s %8s %8s %8s %8s %9.3f %10.3f\n", s, r2, w2, r1, w1, r1 / r2, w1 / w2 }'
    done
done
