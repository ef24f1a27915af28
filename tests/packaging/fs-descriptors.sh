#!/bin/bash
# SPDX-License-Identifier: MIT
# The filesystem store's two kept descriptors (issue 42): what they are
# and the primitives on them live in src/fs/dir_fds.c alone, which calls
# nothing of dir.c's (dir.c decides when to make, join or join again, and
# calls down to it: no circle between the two).  And one descriptor, one
# name across src/fs: the claims directory's is claims_fd, the top's
# top_fd, their paths claims_path and top_path.
. "$(dirname "$0")/../lib/check.sh" || exit 99
fs=${SCL_SRCDIR:?run through make check}/src/fs

# FILE... of src/fs (dir_fds.c aside) that contain the extended regular
# expression PATTERN, named each on a line; nothing when none does.
outside_dir_fds() { # PATTERN
    for file in "$fs"/*.[ch]; do
        case $file in */dir_fds.[ch]) continue ;; esac
        grep -Eq "$1" "$file" && echo "${file#"$fs"/}"
    done
    return 0
}

# One of them: PATTERN (what only dir_fds.c may do) found nowhere else.
only_dir_fds() { # DESCRIPTION PATTERN
    found=$(outside_dir_fds "$2")
    if [ -z "$found" ] && grep -Eq "$2" "$fs/dir_fds.c" 2>/dev/null; then
        pass
    else
        fail "$1: in $(echo ${found:-nothing}) (src/fs/dir_fds.c alone must)"
    fi
}

only_dir_fds "the table of kept descriptors" 'struct kept_dir'
only_dir_fds "moving a kept descriptor high" 'F_DUPFD_CLOEXEC'
only_dir_fds "renumbering one by dup3" 'SYS_dup3'
only_dir_fds "the numbers they are kept at" '[{,][[:space:]]*6[23][[:space:]]*[,}]'
# dir.c calls down to dir_fds.c, never the reverse.
up=$(grep -Eo 'scl_dir_[a-z_]*[[:space:]]*\(' "$fs/dir_fds.c" 2>/dev/null | grep -v '^scl_dir_fds_' || true)
if [ -f "$fs/dir_fds.c" ] && ! grep -Eq '#[[:space:]]*include[[:space:]]*"dir\.h"' "$fs/dir_fds.c" && [ -z "$up" ]; then
    pass
else
    fail "src/fs/dir_fds.c missing, or it includes dir.h or calls up into dir.c: $(echo $up)"
fi

# The names they had before: dir_fd, dirfd (but libc's dirfd() call),
# claimsfd, topfd, dir_path.
old=$(cd "$fs" && grep -nE '\b(dir_fd|claimsfd|topfd|dir_path)\b|\bdirfd\b[[:space:]]*[^[:space:](]|\bdirfd$' ./*.[ch] || true)
if [ -z "$old" ]; then
    pass
else
    fail "one descriptor, one name (claims_fd, top_fd, claims_path, top_path): src/fs still says, $(echo "$old" | wc -l) lines:
$(echo "$old" | head -5)"
fi
finish
