#!/usr/bin/env bash
# bench/vs-fio.sh — run the same workloads with fio and with storlab back to back, and print the
# ratios storlab/fio (IOPS: higher is better; CPU seconds per I/O: lower is better).
#
# Usage: [ROWS=REGEX] [VIEW=chart] bench/vs-fio.sh [SECONDS_PER_RUN] [ROUNDS]   (defaults: 5 s, 2 rounds)
# ROWS keeps only the rows whose label matches the extended regular expression (e.g.
# ROWS='QD32 O_DIRECT' or ROWS='^mmap|loop/tmpfs sync').
# VIEW=chart runs storlab with its live view drawn (stderr on a pseudo-terminal made by
# `script`, util-linux), to measure what the view costs: compare with a run without VIEW.
# Each row alternates fio and storlab ROUNDS times and keeps each tool's best round, so a noisy
# neighbour on this shared machine hurts both alike. Both tools record full latency statistics
# (fio's defaults; storlab always does). Files live in a temporary directory removed on exit.
# As root, the loop rows read a loop device over a file in tmpfs (/dev/shm): O_DIRECT I/O then
# goes through the block layer to memory, so the VM's disk is not the bound and the tools' own
# costs show. The script sets the device up and detaches it on exit; without root those rows
# are skipped.
# fio runs each job in a process that starts a session of its own (backend.c, thread_main:
# setsid()), and with the kernel's autogroup scheduling (sched_autogroup_enabled=1) a session is
# a scheduling group of its own: on a busy machine fio's job gets a whole group's share of the
# CPU, whatever else runs in the caller's session. storlab is started under `setsid` so that it
# competes on the same terms.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-5}
rounds=${2:-2}
command -v fio >/dev/null || { echo "bench: fio is not installed (apt-get install fio)" >&2; exit 2; }
command -v setsid >/dev/null || { echo "bench: setsid is not installed (util-linux)" >&2; exit 2; }
row_filter=${ROWS:-}
view=${VIEW:-}
if [[ -n $view ]]; then
    command -v script >/dev/null || { echo "bench: VIEW needs script (util-linux)" >&2; exit 2; }
fi
cargo build --release -q -p storlab
storlab=target/release/storlab
work=$(mktemp -d "${TMPDIR:-/var/tmp}/storlab-bench.XXXXXX")
loop_dev=""
loop_backing=""
cleanup() {
    if [[ -n $loop_dev ]]; then losetup -d "$loop_dev" || true; fi
    if [[ -n $loop_backing ]]; then rm -f "$loop_backing"; fi
    rm -rf "$work"
}
trap cleanup EXIT
file="$work/data"

# The cached-file row reads a file that is in the page cache (invalidate=0 on both tools: fio and
# storlab drop cached pages before a job by default); the O_DIRECT row bypasses the cache.
# Lay the file out once with fio, then read it once so the cache holds it.
fio --name=layout --filename="$file" --size=256m --rw=write --bs=1m --ioengine=psync \
    --output-format=terse >/dev/null
cat "$file" >/dev/null

# A loop device over a 256 MiB tmpfs file, written once so reads return real data.
if [[ $(id -u) -eq 0 ]] && command -v losetup >/dev/null && [[ -d /dev/shm ]]; then
    loop_backing=$(mktemp /dev/shm/storlab-bench-loop.XXXXXX)
    dd if=/dev/urandom of="$loop_backing" bs=1M count=256 status=none
    loop_dev=$(losetup --find --show "$loop_backing")
fi

rows=(
  "null 4KiB QD1|--ioengine=null --rw=randread --bs=4k --iodepth=1 --size=1g"
  "null 4KiB QD32|--ioengine=null --rw=randread --bs=4k --iodepth=32 --size=1g"
  "psync 4KiB randread QD1 cached|--ioengine=psync --rw=randread --bs=4k --iodepth=1 --invalidate=0 --filename=$file --size=256m"
  "io_uring 4KiB randread QD32 O_DIRECT|--ioengine=io_uring --rw=randread --bs=4k --iodepth=32 --direct=1 --filename=$file --size=256m"
  "libaio 4KiB randread QD32 O_DIRECT|--ioengine=libaio --rw=randread --bs=4k --iodepth=32 --direct=1 --filename=$file --size=256m"
  "sync 4KiB randread QD1 cached|--ioengine=sync --rw=randread --bs=4k --iodepth=1 --invalidate=0 --filename=$file --size=256m"
  "pvsync2 4KiB randread QD1 cached|--ioengine=pvsync2 --rw=randread --bs=4k --iodepth=1 --invalidate=0 --filename=$file --size=256m"
  "mmap 4KiB randread QD1 cached|--ioengine=mmap --rw=randread --bs=4k --iodepth=1 --invalidate=0 --filename=$file --size=256m"
  "posixaio 4KiB randread QD32 O_DIRECT|--ioengine=posixaio --rw=randread --bs=4k --iodepth=32 --direct=1 --filename=$file --size=256m"
)
if [[ -n $loop_dev ]]; then
    rows+=(
      "loop/tmpfs io_uring 4KiB randread QD32 O_DIRECT|--ioengine=io_uring --rw=randread --bs=4k --iodepth=32 --direct=1 --filename=$loop_dev --size=256m"
      "loop/tmpfs libaio 4KiB randread QD32 O_DIRECT|--ioengine=libaio --rw=randread --bs=4k --iodepth=32 --direct=1 --filename=$loop_dev --size=256m"
      "loop/tmpfs sync 4KiB randread QD1 O_DIRECT|--ioengine=sync --rw=randread --bs=4k --iodepth=1 --direct=1 --filename=$loop_dev --size=256m"
    )
else
    echo "bench: not root (or no losetup or /dev/shm): the loop-device rows are skipped" >&2
fi

# Print "iops cpu_s_per_io" from a fio-shaped JSON document (fio's own, or storlab's fio-json).
extract() {
    python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
job = doc["jobs"][0]
rd = job["read"]
ios = rd["total_ios"]
runtime_s = rd["runtime"] / 1000.0
cpu_s = (job["usr_cpu"] + job["sys_cpu"]) / 100.0 * runtime_s
print(rd["iops"], cpu_s / ios if ios else float("nan"))
' "$1"
}

printf '%-50s %14s %14s %8s %14s %14s %8s\n' workload "fio IOPS" "storlab IOPS" ratio "fio CPU ns/IO" "storlab ns/IO" ratio
for row in "${rows[@]}"; do
    label=${row%%|*}
    flags=${row#*|}
    if [[ -n $row_filter ]] && ! [[ $label =~ $row_filter ]]; then
        continue
    fi
    best_fio_iops=0; best_fio_cpu=inf; best_sl_iops=0; best_sl_cpu=inf
    for ((r = 0; r < rounds; r++)); do
        # --eta=never: no progress display on a terminal (storlab's would be two more threads
        # in the measured process; fio draws its own from a process apart from the job's).
        # shellcheck disable=SC2086
        fio --name=bench $flags --time_based --runtime="$secs" --eta=never --output-format=json >"$work/fio.json" 2>/dev/null
        if [[ -n $view ]]; then
            # The live view on a terminal: script gives storlab's stderr a pseudo-terminal.
            setsid -w script -qec "$storlab run --name=bench $flags --time_based --runtime=$secs --output-format=fio-json --no-db >$work/storlab.json" /dev/null >/dev/null
        else
            # shellcheck disable=SC2086
            setsid -w "$storlab" run --name=bench $flags --time_based --runtime="$secs" --eta=never --output-format=fio-json --no-db >"$work/storlab.json"
        fi
        read -r fi fc < <(extract "$work/fio.json")
        read -r si sc < <(extract "$work/storlab.json")
        read -r best_fio_iops best_fio_cpu best_sl_iops best_sl_cpu < <(python3 -c "
import sys
a = [float(x) for x in sys.argv[1:]]
print(max(a[0], a[4]), min(a[1], a[5]), max(a[2], a[6]), min(a[3], a[7]))
" "$best_fio_iops" "$best_fio_cpu" "$best_sl_iops" "$best_sl_cpu" "$fi" "$fc" "$si" "$sc")
    done
    python3 -c "
import sys
label = sys.argv[1]
fi, fc, si, sc = (float(x) for x in sys.argv[2:])
print(f'{label:<50} {fi:14.0f} {si:14.0f} {si / fi:8.2f} {fc * 1e9:14.0f} {sc * 1e9:14.0f} {sc / fc:8.2f}')
" "$label" "$best_fio_iops" "$best_fio_cpu" "$best_sl_iops" "$best_sl_cpu"
done
echo "IOPS ratio = storlab/fio (>= 1.0 means storlab is at least as fast);" \
     "CPU ratio = storlab/fio CPU seconds per I/O (<= 1.0 means storlab is at least as cheap)."
