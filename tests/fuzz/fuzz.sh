#!/bin/bash
# SPDX-License-Identifier: MIT
# Builds the libFuzzer targets of this folder with clang (ASan and UBSan
# on) and runs each for SCL_FUZZ_SECONDS (default 30) from its corpus in
# corpus/TARGET; what the fuzzer adds goes to a scratch copy, not to the
# repository.  Runs in the plain build's `make check` (the sanitizer build
# would only repeat it).  A crash fails the test and leaves its input in
# the scratch directory named on standard error.
set -u
. "$(dirname "$0")/../lib/check.sh" || exit 99
src=${SCL_SRCDIR:?run through make check}
build=${SCL_HELPERS:?}/..
seconds=${SCL_FUZZ_SECONDS:-30}
if [ -n "${SCL_ASAN_RUNTIME:-}" ]; then
    echo "SKIP: the fuzzers run in the plain build's make check, with sanitizers of their own"
    exit 77
fi
clang=$(command -v clang-14 || command -v clang) || { echo "fuzz.sh: clang is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
flags=(-g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I"$build" -I"$src/src/core"
    -I"$src/src/fs")
core=("$src/src/fs/names.c" "$src/src/fs/sha256.c")
declare -A sources=(
    [names]="${core[*]}"
    [holder]="${core[*]} $src/src/fs/holder.c $src/src/fs/claim.c $src/src/core/sigsafe.c $src/src/core/bound.c $src/src/core/budget.c $src/src/core/log.c $src/src/core/settings.c $src/src/core/scratch.c $src/src/core/proc.c $src/src/fs/wake.c $src/src/fs/watch.c $src/src/fs/times.c $src/src/fs/history.c"
)
for target in names holder; do
    # shellcheck disable=SC2086 # the source lists are word lists
    if ! "$clang" "${flags[@]}" -o "$scratch/fuzz_$target" "$src/tests/fuzz/fuzz_$target.c" ${sources[$target]} \
        2>"$scratch/$target.build"; then
        fail "fuzz_$target does not build:"
        cat "$scratch/$target.build" >&2
        continue
    fi
    mkdir -p "$scratch/corpus-$target" "$scratch/crash-$target"
    cp "$src/tests/fuzz/corpus/$target"/* "$scratch/corpus-$target/"
    if (cd "$scratch/crash-$target" && ASAN_OPTIONS=detect_leaks=1 "$scratch/fuzz_$target" -max_total_time="$seconds" \
        -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$scratch/corpus-$target") >"$scratch/$target.log" 2>&1; then
        echo "fuzz_$target: $(grep -E 'stat::number_of_executed_units' "$scratch/$target.log" | awk '{print $2}') runs in ${seconds} s, no failure"
        pass
    else
        fail "fuzz_$target found a failing input:"
        tail -n 40 "$scratch/$target.log" >&2
        cp -r "$scratch/crash-$target" "${TMPDIR:-/tmp}/swerve-claim-fuzz-crash-$target.$$"
        echo "the input is kept in ${TMPDIR:-/tmp}/swerve-claim-fuzz-crash-$target.$$" >&2
    fi
done
finish
