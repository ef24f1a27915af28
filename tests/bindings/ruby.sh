#!/bin/bash
# SPDX-License-Identifier: MIT
# The Ruby binding (bindings/ruby/swerve_claim.rb, over Fiddle) under the
# shim: minitest's tests in swerve_claim_test.rb, the seed's examples
# (seed_examples.rb) among them, the guide's coroutines also as the async
# gem's tasks and under a plain fiber scheduler.
set -u
. "$(dirname "$0")/lib.sh"
need "ruby with Fiddle, minitest and async" "ruby ruby-async" ruby -rfiddle -rminitest -rasync -e ""
run_suite ruby -I"$src/bindings/ruby" "$src/tests/bindings/swerve_claim_test.rb" --verbose
# minitest's summary: "24 runs, 107 assertions, 0 failures, 0 errors, 0 skips"; a skip is no pass.
read -r runs bad < <(sed -nE 's/^([0-9]+) runs, [0-9]+ assertions, ([0-9]+) failures, ([0-9]+) errors, ([0-9]+) skips$/\1 \2 \3 \4/p' "$out" |
    tail -1 | awk '{ print $1, $2 + $3 + $4 }')
count_suite "$((${runs:-0} - ${bad:-0}))" "${bad:-0}"
