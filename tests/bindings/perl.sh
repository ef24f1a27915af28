#!/bin/bash
# SPDX-License-Identifier: MIT
# The Perl binding (bindings/perl/Swerve/Claim.pm, over FFI::Platypus)
# under the shim: Test::More's tests in swerve_claim.t, the seed's
# examples (seed_examples.pl) among them, and waits for a claim from
# Mojo::IOLoop, IO::Async and AnyEvent.
set -u
. "$(dirname "$0")/lib.sh"
need FFI::Platypus libffi-platypus-perl perl -MFFI::Platypus -e ""
# The event loops that wait on wait_fd's descriptor.
need Mojolicious libmojolicious-perl perl -MMojo::IOLoop -e ""
need IO::Async libio-async-perl perl -MIO::Async::Loop -e ""
need AnyEvent libanyevent-perl perl -MAnyEvent -e ""
run_suite perl -I"$src/bindings/perl" "$src/tests/bindings/swerve_claim.t"
# The top-level TAP lines: "ok N - ..." and "not ok N - ...".
count_suite "$(grep -c '^ok ' "$out")" "$(grep -c '^not ok ' "$out")"
