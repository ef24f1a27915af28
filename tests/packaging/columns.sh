#!/bin/bash
# SPDX-License-Identifier: MIT
# One column, one place: a column of list and history is written once, in
# its store's table (struct scl_admin_column), and --help prints it from
# there.  For each store (the filesystem one; the PostgreSQL one, named
# by a server nobody listens at: --help must not connect) and each of
# list and history: --help shows every column -o accepts, each with its
# help; -o takes each (no usage error); the bash completion offers exactly
# these; the manual names each in that command's paragraph, and names no
# column, in capitals, that the store's tables do not have.
set -u
. "$(dirname "$0")/../lib/check.sh" || exit 99
src=${SCL_SRCDIR:?run through make check}
PATH=${SCL_HELPERS:?run through make check}/..:$PATH
. "$(dirname "$0")/../lib/completion.sh" || exit 99
man=$src/doc/swerve-claim.1.in
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pg_store=postgresql://127.0.0.1:1/x
# Words in capitals the manual's paragraphs use that are no column.
not_columns="ISO UTC JSON SIGSTOP"

# The columns `CMD --help` lists, one a line, as "NAME HELP".
help_columns() { # CMD
    swerve-claim "$1" --help | awk '/^Columns of / { on = 1; next } on && /^$/ { exit }
        on && sub(/^  [*+ ] /, "") { print }'
}

# The columns -o accepts, as its usage error names them, one a line.
accepted_columns() { # CMD
    swerve-claim --base "$work" "$1" -o NO-SUCH-COLUMN 2>&1 | sed -n 's/.*(columns: \([^)]*\)).*/\1/p' | tr ',' '\n'
}

# The text of the manual between the line matching START and the next
# matching STOP, without its macro lines, fonts and arguments (italics),
# with "\-" as "-".
man_text() { # START STOP
    awk -v start="$1" -v stop="$2" '$0 ~ start { on = 1; next } on && $0 ~ stop { exit } on && !/^\./' "$man" |
        sed -e 's/\\-/-/g' -e 's/\\fI[^\\]*//g' -e 's/\\f[BRP]//g'
}

# Whether TEXT names WORD as a word of its own (hyphens belong to words:
# HOST is not named by REPORTED-HOST).
names() { # WORD TEXT
    grep -qE "(^|[^A-Za-z0-9_-])$1([^A-Za-z0-9_-]|\$)" <<<"$2"
}

# The words in capitals of TEXT (none with '_': environment variables).
capitals() { # TEXT
    grep -oE '(^|[^A-Za-z0-9_-])[A-Z][A-Z0-9_-]*[A-Z0-9]' <<<"$1" | sed 's/^[^A-Z]//' | grep -v _ | sort -u
}

for store in filesystem postgresql; do
    if [ $store = postgresql ]; then
        export SWERVE_CLAIM_STORE=$pg_store
        text=$(man_text '^\.SS With SWERVE_CLAIM_STORE' '^\.S[HS]')
    else
        unset SWERVE_CLAIM_STORE
    fi
    store_columns=""
    for cmd in list history; do
        [ $store = filesystem ] && text=$(man_text "^\\.B $cmd\$" '^\.TP')
        help=$(help_columns $cmd)
        columns=$(awk '{ print $1 }' <<<"$help")
        store_columns="$store_columns $columns"
        check "$store: $cmd --help lists columns" test -n "$columns"
        check "$store: $cmd --help lists every column -o takes, in its order" \
            test "$columns" = "$(accepted_columns $cmd)"
        check "$store: the completion of $cmd -o offers exactly --help's columns" \
            test "$(sort -u <<<"$columns")" = "$(offered swerve-claim $cmd -o "")"
        if command -v strace >/dev/null; then
            strace -f -qq -e trace=connect -o "$work/trace" swerve-claim $cmd --help >/dev/null 2>&1
            check "$store: $cmd --help connects to no server" bash -c "! grep -q AF_INET '$work/trace'"
        fi
        check "$store: $cmd --help says nothing on standard error" \
            test -z "$(swerve-claim $cmd --help 2>&1 >/dev/null)"
        check "$store: $cmd -o takes no unknown column" status_is 2 swerve-claim --base "$work" $cmd -o NO-SUCH-COLUMN
        while read -r column what; do
            [ -n "$column" ] || continue
            check "$store: $cmd's column $column has its help" test -n "$what"
            swerve-claim --base "$work" $cmd -o "$column" >/dev/null 2>&1
            check "$store: $cmd -o $column is no usage error" test $? -ne 2
            check "$store: the manual names $cmd's column $column" names "$column" "$text"
        done <<<"$help"
    done
    [ $store = filesystem ] && text=$(man_text '^\.B list$' '^\.TP')$'\n'$(man_text '^\.B history$' '^\.TP')
    for word in $(capitals "$text"); do
        check "$store: the manual's '$word' is a column of its tables" \
            names "$word" "$store_columns $not_columns"
    done
done
finish
