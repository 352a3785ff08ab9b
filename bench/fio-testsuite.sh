#!/usr/bin/env bash
# bench/fio-testsuite.sh — run fio's own test-suite job files (t/jobs/*.fio) under storlab, with
# the checks fio's maintainers apply to them: fio's t/run-fio-tests.py itself, given storlab in
# fio's place.
#
# Usage: bench/fio-testsuite.sh FIO_SRC_DIR [STORLAB] [TEST_ID...]
#   FIO_SRC_DIR  an unpacked fio source tree (3.33 here); its t/run-fio-tests.py and t/jobs are used
#                as they are, nothing is copied into this repository
#   STORLAB      the storlab binary (default: target/release/storlab, built if missing)
#   TEST_ID      run-fio-tests.py test numbers (default: 1-26, every t/jobs test; 1000+ are fio's
#                own C test programs, not job files)
#
# run-fio-tests.py runs `FIO --max-jobs=16 --output-format=FMT --output=FILE JOB` in a fresh
# directory per test (with the test's pre-job first where it has one) and then checks the exit
# code, that stderr is empty, and the test's own JSON/log checks (bytes read, iops ratios, log
# offsets). FIO here is storlab itself under the name `fio` (a symbolic link), which is
# `storlab fio`: fio's command line and conventions (fio's output-format names, no results
# database, stderr as quiet as fio's; docs/decisions/0046). Nothing is translated or filtered.
# Requirement probes are skipped (-k): they read fio's build configuration (config-host.h),
# which says nothing about storlab. Tests run one at a time; after each, its data files
# (anything over 1 MiB: t0002 and t0003 lay out 5 GiB files, as fio does) are deleted, so about
# 6 GB free under ${TMPDIR:-/var/tmp} is needed at the peak. The rest of the artifact directory
# (commands, stdout, stderr, JSON outputs and logs of every test) is kept and printed at the end.
# Give fio's own binary as STORLAB (e.g. /usr/bin/fio) to get fio's results on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."

fio_src=${1:?usage: bench/fio-testsuite.sh FIO_SRC_DIR [STORLAB] [TEST_ID...]}
storlab=${2:-target/release/storlab}
shift $(($# < 2 ? $# : 2))
tests=("$@")
if [[ ${#tests[@]} -eq 0 ]]; then
    tests=($(seq 1 26))
fi
[[ -f $fio_src/t/run-fio-tests.py ]] || {
    echo "bench: $fio_src/t/run-fio-tests.py not found (FIO_SRC_DIR must be a fio source tree)" >&2
    exit 2
}
if [[ $storlab == target/release/storlab && ! -x $storlab ]]; then
    cargo build --release -q -p storlab
fi
[[ -x $storlab ]] || { echo "bench: storlab binary '$storlab' not found" >&2; exit 2; }
storlab=$(realpath "$storlab")

work=$(mktemp -d "${TMPDIR:-/var/tmp}/storlab-fio-testsuite.XXXXXX")
wrapper="$work/fio"
ln -s "$storlab" "$wrapper"

echo "fio: $wrapper -> $storlab ($("$wrapper" --version 2>&1 | head -1))"
echo "fio tests: ${tests[*]}"
mkdir "$work/artifacts"
passed=0
failed=0
for id in "${tests[@]}"; do
    # One run-fio-tests.py per test (its own artifact root), so the data can go in between.
    root="$work/artifacts/$id"
    python3 "$fio_src/t/run-fio-tests.py" -k -r "$fio_src" -f "$wrapper" -a "$root" -o "$id" \
        >"$root.txt" 2>&1 || true
    grep -E "^Test $id (PASSED|FAILED)" "$root.txt" | cut -c1-400 || {
        echo "Test $id: run-fio-tests.py did not report it; see $root.txt"
    }
    if grep -qE "^Test $id PASSED" "$root.txt"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
    fi
    find "$root" -type f -size +1M -delete 2>/dev/null || true
done
echo "$passed passed, $failed failed of ${#tests[@]} (fio 3.33 t/run-fio-tests.py checks)"
echo "artifacts (stdout, stderr, outputs per test): $work/artifacts"
[[ $failed -eq 0 ]]
