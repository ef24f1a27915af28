#!/bin/sh
# SPDX-License-Identifier: MIT
# One table of bounds (src/core/budget.h, issue 40): every SCL_BUDGET_* is
# defined there and nowhere else, used by some walk, and has its row in
# doc/security.md's "Every walk and its bound", so that a new walk over
# what a less privileged process writes cannot land without its row.
set -eu
top=${SCL_SRCDIR:?run through make check}
table=$top/src/core/budget.h
doc=$top/doc/security.md

bad=0
complain() {
    echo "budgets.sh: $*" >&2
    bad=1
}

budgets=$(sed -n 's/^[[:space:]]*#[[:space:]]*define[[:space:]]\{1,\}\(SCL_BUDGET_[A-Z0-9_]*\).*/\1/p' "$table" | grep -vx SCL_BUDGET_H)
[ -n "$budgets" ] || complain "no SCL_BUDGET_* defined in $table"

# The section, up to the next one of its level.
rows=$(sed -n '/^## Every walk and its bound$/,/^## /p' "$doc")
[ -n "$rows" ] || complain "doc/security.md has no section \"## Every walk and its bound\""

for budget in $budgets; do
    printf '%s\n' "$rows" | grep -q "^|.*\`$budget\`" ||
        complain "$budget has no row in doc/security.md's \"Every walk and its bound\""
    grep -rlw --include='*.c' --include='*.h' "$budget" "$top/src" | grep -qv "/src/core/budget.h$" ||
        complain "$budget is used by no walk in src/"
done

elsewhere=$(grep -rn --include='*.c' --include='*.h' '^[[:space:]]*#[[:space:]]*define[[:space:]]\{1,\}SCL_BUDGET_' "$top/src" |
    grep -v "^$table:" || true)
[ -z "$elsewhere" ] || complain "a bound defined outside src/core/budget.h: $elsewhere"

if [ "$bad" -ne 0 ]; then
    exit 1
fi
echo "budgets.sh: $(echo "$budgets" | wc -w) budgets, each used and with its row"
