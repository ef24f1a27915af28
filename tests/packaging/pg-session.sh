#!/bin/bash
# SPDX-License-Identifier: MIT
# The PostgreSQL session's parts (issue 42): its turns among threads
# (session_turns.c), the cancel of its running statement
# (session_cancel.c) and its patience and deadline (session_patience.c)
# each live in a file of their own, which session.c calls down to: the
# turns call the cancel and the patience, and those two call neither
# each other nor anything above them.
. "$(dirname "$0")/../lib/check.sh" || exit 99
pg=${SCL_SRCDIR:?run through make check}/src/pg

# FILE...: each exists and contains the extended regular expression PATTERN.
has() { # PATTERN FILE...
    local pattern=$1 file
    shift
    for file; do
        [ -f "$pg/$file" ] && grep -Eq "$pattern" "$pg/$file" || return 1
    done
}

check "the ticket lock is session_turns.c's alone" \
    sh -c '! grep -Eq "next_ticket|pthread_|atomic_" "$1/session.c" && grep -q next_ticket "$1/session_turns.c"' sh "$pg"
check "the cancel handle and its lock are session_cancel.c's alone" \
    sh -c '! grep -Eq "[^_]cancel_lock|->cancel\(|freeCancel" "$1/session.c" "$1/session_turns.c" &&
        grep -q freeCancel "$1/session_cancel.c"' sh "$pg"
check "the patience is session_patience.c's alone" \
    sh -c '[ "$(grep -lw "PATIENCE_NS" "$1"/*.c)" = "$1/session_patience.c" ]' sh "$pg"
check "the turns call the cancel and the patience down" has '#include "session_cancel.h"' session_turns.c
check "the cancel and the patience call nothing of the session's above them" \
    sh -c '[ -f "$1/session_cancel.c" ] && [ -f "$1/session_patience.c" ] &&
        ! grep -Eq "#include \"session_(turns|patience)\.h\"|scl_pg_(turns|deadline_now|patience)" "$1/session_cancel.c" &&
        ! grep -Eq "#include \"session_(turns|cancel)\.h\"|scl_pg_(turns|cancel)_" "$1/session_patience.c"' sh "$pg"
finish
