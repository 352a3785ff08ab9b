#!/usr/bin/env bash
# bench/fio-examples.sh — run fio's own example job files through storlab, unmodified, as issue
# #20's checker does, and classify what happened to each.
#
# Usage: bench/fio-examples.sh FIO_EXAMPLES_DIR [TARGET]      (TARGET default: sim:usb3-uas-ssd)
#   e.g. bench/fio-examples.sh ~/src/fio-3.33/examples
# Environment: STORLAB_BIN (default: build and use target/release/storlab), WALL_SECONDS (60),
#   RUNTIME (2: the --runtime flag given beside every file), FILE_LIMIT_KIB (1048576).
#
# Each *.fio runs twice, each in a fresh scratch directory that is the current directory (so the
# file's relative filename= and the temporary files land there, as a user running it from a
# scratch directory would) and is removed afterwards:
#   sim   storlab run --runtime=$RUNTIME --target TARGET FILE
#   file  storlab run --runtime=$RUNTIME FILE      (the file's own filename=/directory=)
# Flags beside a job file are global options, as on fio's command line: the file's own
# [global] and sections win (a job's runtime=900 stays 900), so the wall timeout (SIGINT, then
# SIGKILL 10 s later) is what ends such a job. Sizes cannot be capped by a flag either (a job's
# size=10g wins, in fio too): on TARGET sim: size is simulated and costs no disk; in the file
# column the shell's file-size limit (ulimit -f, FILE_LIMIT_KIB; SIGXFSZ ignored so writes past
# it fail with EFBIG) keeps any one file from filling this machine's disk. fio's examples name
# devices like /dev/sdb: storlab must refuse them (it creates no files under /dev), never write.
#
# Classes: ran (exit 0); scope (exit 2, one line naming an engine, device kind or file kind
# storlab does not do: "out of scope", "/dev", "cannot be benchmarked"); refused (exit 2, one
# line naming a key or value); capped (the file-size limit stopped the layout: EFBIG); timeout
# (still running at the wall timeout: it ran, cut short); fail (any other exit, a panic, or a
# refusal that is not one error line; warnings about the jobs before it are allowed). The last column is the first line storlab printed on stderr
# for the sim run (and the file run's when it differs in class).
set -uo pipefail

if [[ $# -lt 1 || ! -d $1 ]]; then
    echo "usage: bench/fio-examples.sh FIO_EXAMPLES_DIR [TARGET]  (a directory of *.fio files)" >&2
    exit 2
fi
examples=$(cd "$1" && pwd)
target=${2:-sim:usb3-uas-ssd}
wall=${WALL_SECONDS:-60}
runtime=${RUNTIME:-2}
file_limit_kib=${FILE_LIMIT_KIB:-1048576}
repo=$(cd "$(dirname "$0")/.." && pwd)
if [[ -z ${STORLAB_BIN:-} ]]; then
    (cd "$repo" && cargo build --release -q -p storlab) || exit 1
    STORLAB_BIN=$repo/target/release/storlab
fi
storlab=$STORLAB_BIN

scratch_root=$(mktemp -d "${TMPDIR:-/var/tmp}/storlab-fio-examples.XXXXXX")
trap 'rm -rf "$scratch_root"' EXIT
export STORLAB_DB=$scratch_root/results.sqlite

# classify RC STDERR_FILE -> prints "CLASS<TAB>FIRST_LINE"
classify() {
    local rc=$1 err=$2 first lines others
    # The error line when there is one (warnings about the jobs may come before it).
    first=$(grep -m1 '^storlab: error' "$err" || grep -m1 -v '^storlab: \[\|^storlab: saved\|^$' "$err")
    first=${first:0:160}
    lines=$(grep -c '^storlab: error' "$err")
    others=$(grep -v '^storlab: error\|^storlab: warning\|^$' "$err" | grep -c .)
    if grep -q 'panicked' "$err"; then
        printf 'fail\t%s\n' "$first"
    elif [[ $rc -eq 0 ]]; then
        printf 'ran\t%s\n' "$first"
    elif [[ $rc -eq 124 || $rc -eq 137 ]]; then
        printf 'timeout\t%s\n' "$first"
    elif grep -q 'File too large' "$err"; then
        printf 'capped\t%s\n' "$first"
    elif [[ $rc -eq 2 && $lines -eq 1 && $others -eq 0 ]]; then
        if grep -qE 'out of scope|under /dev|cannot be benchmarked' "$err"; then
            printf 'scope\t%s\n' "$first"
        else
            printf 'refused\t%s\n' "$first"
        fi
    elif [[ ! -s $err ]]; then
        # Nothing could be written: the scratch directory's file system filled up (a shared
        # machine's disk), which says nothing about the job file.
        printf 'fail\t(exit %s and no stderr: is the scratch file system full?)\n' "$rc"
    else
        printf 'fail\t%s (exit %s)\n' "$first" "$rc"
    fi
}

# Absolute filename= paths of JOB_FILE that do not exist yet (outside /dev): the file column
# removes what a run created there (fio's examples name /tmp/testfile, /tmp/data).
new_absolute_files() {
    sed -n 's/^[[:space:]]*filename[[:space:]]*=[[:space:]]*\(\/[^ ;#]*\).*/\1/p' "$1" |
        grep -v '^/dev/' | sort -u | while read -r path; do
            [[ -e $path ]] || echo "$path"
        done
}

# run_one JOB_FILE [--target T] -> classify's line
run_one() {
    local job=$1 dir rc created
    shift
    created=$(new_absolute_files "$job")
    dir=$(mktemp -d "$scratch_root/run.XXXXXX")
    (
        cd "$dir" || exit 1
        trap '' XFSZ
        ulimit -f "$file_limit_kib"
        timeout -s INT -k 10 "$wall" "$storlab" run --runtime="$runtime" "$@" "$job" \
            >"$dir/.stdout" 2>"$dir/.stderr" </dev/null
    )
    rc=$?
    classify "$rc" "$dir/.stderr"
    rm -rf "$dir"
    for path in $created; do
        if [[ -f $path ]]; then rm -f "$path"; fi
    done
}

declare -A count_sim count_file
printf '%-34s %-8s %-8s %s\n' "job file" "sim" "file" "first line (sim; file)"
for job in "$examples"/*.fio; do
    IFS=$'\t' read -r sim_class sim_line < <(run_one "$job" --target "$target")
    IFS=$'\t' read -r file_class file_line < <(run_one "$job")
    count_sim[$sim_class]=$((${count_sim[$sim_class]:-0} + 1))
    count_file[$file_class]=$((${count_file[$file_class]:-0} + 1))
    note=$sim_line
    if [[ $file_class != "$sim_class" || -z $note ]]; then note="$note; $file_line"; fi
    printf '%-34s %-8s %-8s %s\n' "$(basename "$job")" "$sim_class" "$file_class" "$note"
done
echo
for column in sim file; do
    declare -n counts=count_$column
    line="$column ($([[ $column == sim ]] && echo "$target" || echo "files in a scratch dir")):"
    for class in ran scope refused capped timeout fail; do
        line+=" $class ${counts[$class]:-0}"
    done
    echo "$line"
done
