# SPDX-License-Identifier: MIT
# The bash completion of swerve-claim and swerve-claim-preload, loaded
# through bash-completion itself, and what it offers for a command line
# (sourced by tests/packaging/completion.sh and columns.sh, after
# check.sh).  Without bash-completion the test is skipped (77).
completion=/usr/share/bash-completion/bash_completion
if ! [ -r "$completion" ]; then
    echo "SKIP: bash-completion is not installed (scripts/install-deps.sh installs it)"
    exit 77
fi
. "$completion"
. "${SCL_SRCDIR:?run through make check}/completion/swerve-claim"

# What completing the last WORD offers, one a line, sorted.
offered() { # WORD...
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMP_LINE="$*"
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    # (compopt complains outside a real completion: not our business)
    "$(complete -p "$1" | sed 's/.*-F \([^ ]*\) .*/\1/')" "$1" "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}" 2>/dev/null
    printf '%s\n' "${COMPREPLY[@]}" | sort -u
}
