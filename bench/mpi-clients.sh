#!/usr/bin/env bash
# bench/mpi-clients.sh — issue 22's targets for the MPI build (docs/distributed.md, "Measured"):
#  1. a 2-rank psync run on per-rank files against two single runs of the same job started
#     together: the aggregate IOPS over the two runs' summed IOPS, in pairs that alternate which
#     goes first (the second of a pair is faster on a virtual disk), and their mean;
#  2. `validate validation/calibration.toml` with 1 and 2 ranks, each rank on one core (mpirun's
#     binding): wall time of each, their ratio, and whether the JSON is identical.
#
# Usage: bench/mpi-clients.sh [SECONDS_PER_RUN] [PAIRS]   (defaults: 10 s, 4 pairs)
# Files live in a temporary directory removed on exit. Needs Open MPI (mpirun).
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-10}
pairs=${2:-4}
command -v mpirun >/dev/null || { echo "bench: mpirun is not installed (apt-get install openmpi-bin)" >&2; exit 2; }
cargo build --release -q -p storlab --features mpi
storlab=$PWD/target/release/storlab
mpirun=(mpirun)
[ "$(id -u)" = 0 ] && mpirun+=(--allow-run-as-root)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

job=(--name=clients --ioengine=psync --rw=randread --bs=4k --size=256m --direct=1 --time_based
     "--runtime=$secs" --no-db --output-format=json)
iops() { python3 -c 'import json,sys; print(sum(json.load(open(f))["jobs"][0]["read"]["iops"] for f in sys.argv[1:]))' "$@"; }
ranks_run() { "${mpirun[@]}" --bind-to none -np 2 "$storlab" run "${job[@]}" "--filename=$dir/rank.{rank}" > "$dir/a.json" 2>/dev/null; }
single_runs() {
    "$storlab" run "${job[@]}" "--filename=$dir/single.0" > "$dir/b0.json" 2>/dev/null &
    "$storlab" run "${job[@]}" "--filename=$dir/single.1" > "$dir/b1.json" 2>/dev/null &
    wait
}
ratios=()
for pair in $(seq 1 "$pairs"); do
    if [ $((pair % 2)) = 1 ]; then ranks_run; single_runs; order="2 ranks first"; else single_runs; ranks_run; order="single runs first"; fi
    ratio=$(python3 -c "print(round($(iops "$dir/a.json") / $(iops "$dir/b0.json" "$dir/b1.json"), 3))")
    echo "pair $pair ($order): 2-rank aggregate $(iops "$dir/a.json" | cut -d. -f1) IOPS, two single runs $(iops "$dir/b0.json" "$dir/b1.json" | cut -d. -f1) IOPS, ratio $ratio"
    ratios+=("$ratio")
done
python3 -c "import sys; r=[float(x) for x in sys.argv[1:]]; print(f'mean ratio {sum(r)/len(r):.3f} over {len(r)} pairs (target: within 5% of 1)')" "${ratios[@]}"

cd validation
for ranks in 1 2; do
    start=$(date +%s.%N)
    # One core per rank, as the target asks (validate runs a thread per core it may use).
    "${mpirun[@]}" --bind-to core -np "$ranks" "$storlab" validate calibration.toml \
        --output-format=json > "$dir/validate.$ranks.json"
    end=$(date +%s.%N)
    wall[$ranks]=$(python3 -c "print(round($end - $start, 2))")
    echo "validate, $ranks rank(s): ${wall[$ranks]} s"
done
python3 -c "print(f'2 ranks / 1 rank: {${wall[2]} / ${wall[1]}:.2f} (target: at most 0.6)')"
cmp -s "$dir/validate.1.json" "$dir/validate.2.json" && echo "validate output: identical" || echo "validate output: DIFFERENT"
