# SPDX-License-Identifier: MIT
# A systemd manager of the test's own, for the tests that run real units
# (sourced, after check.sh).  The test machines do not run systemd as
# init, and a user manager does not start there; so systemd runs as a
# container runs it: PID 1 of private PID, mount and UTS namespaces, with
# a /run of its own (a tmpfs), in a cgroup of its own, loading units from
# the test's directory alone (SYSTEMD_UNIT_PATH) and starting none but a
# target of its own until the test starts some.  The network and the
# rest of the filesystem are the machine's.
#
#   systemd_boot UNITS LOG   starts it (SKIP, exit 77, when systemd_unavailable says why not)
#   in_systemd COMMAND...    runs COMMAND in its namespaces (systemctl, ls /run/...)
#   systemd_stop             ends it and removes its cgroups (in the EXIT trap)

systemd_unshare= systemd_pid= systemd_cgroups=()

# The cgroup hierarchies systemd needs, one line each: cgroup2 alone, or
# the v1 name=systemd one (and cgroup2 beside it, when mounted).  Prints
# nothing when neither is there.
systemd_hierarchies() {
    if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
        echo /sys/fs/cgroup
    elif [ -d /sys/fs/cgroup/systemd ]; then
        echo /sys/fs/cgroup/systemd
        [ "$(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ] && echo /sys/fs/cgroup/unified
    fi
}

# Why no manager can start here, or nothing (and status 1) when one can.
systemd_unavailable() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "not root"
    elif [ ! -x /lib/systemd/systemd ]; then
        echo "systemd is not installed"
    elif ! command -v unshare >/dev/null || ! command -v nsenter >/dev/null; then
        echo "unshare and nsenter are missing"
    elif [ -z "$(systemd_hierarchies)" ]; then
        echo "no cgroup hierarchy below /sys/fs/cgroup that it can use"
    elif ! unshare --pid --fork --mount --uts true 2>/dev/null; then
        echo "unshare cannot make PID, mount and UTS namespaces here (a container without the privilege?)"
    elif ! systemd_cgroup_writable; then
        echo "cannot make a cgroup below $(systemd_hierarchies | head -1)"
    else
        return 1
    fi
}

# Whether a cgroup can be made in the first hierarchy (then removed).
systemd_cgroup_writable() {
    local probe
    probe=$(systemd_hierarchies | head -1)/swerve-claim-probe.$$
    mkdir "$probe" 2>/dev/null && rmdir "$probe"
}

# Starts the manager; a test that cannot start one says SKIP, and exits 77.
systemd_boot() { # UNITS LOG
    local units=$1 log=$2 name=swerve-claim-test.$$.$RANDOM h state= why
    if why=$(systemd_unavailable); then
        echo "SKIP: $(basename "$0"): cannot start a systemd manager of its own: $why"
        exit 77
    fi
    # One name in every hierarchy: systemd takes its place in one from
    # where it is in another.
    for h in $(systemd_hierarchies); do
        mkdir "$h/$name" || return 1
        systemd_cgroups+=("$h/$name")
    done
    printf '[Unit]\nDescription=the tests'"'"' own units only\n' >"$units/swerve-claim-test.target"
    # The inner shell is PID 1 of the new namespaces: it mounts /run, moves
    # itself into the cgroups, and becomes systemd.
    unshare --pid --fork --kill-child --mount --uts --mount-proc --propagation private \
        env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin container=swerve-claim-test SYSTEMD_UNIT_PATH="$units" \
        /bin/sh -c 'mount -t tmpfs -o mode=755 tmpfs /run || exit 1
            for cg; do echo $$ >"$cg/cgroup.procs" || exit 1; done
            exec /lib/systemd/systemd --system --unit=swerve-claim-test.target --log-target=console' \
        - "${systemd_cgroups[@]}" >"$log" 2>&1 &
    systemd_unshare=$!
    for _ in $(seq 100); do
        systemd_pid=$(pgrep -P "$systemd_unshare")
        [ -n "$systemd_pid" ] && state=$(in_systemd systemctl is-system-running 2>/dev/null)
        case $state in running | degraded) return 0 ;; esac
        kill -0 "$systemd_unshare" 2>/dev/null || break
        sleep 0.1
    done
    echo "systemd did not start (state '${state:-none}'); its log:" >&2
    cat "$log" >&2
    return 1
}

in_systemd() { nsenter -t "$systemd_pid" -m -p -u "$@"; }

# SIGKILL to the namespace's PID 1 ends every process in it; then its
# cgroups, innermost first, once the kernel has let them go (at most 5 s).
systemd_stop() {
    local cg
    [ -n "$systemd_unshare" ] || return 0
    [ -n "$systemd_pid" ] && kill -9 "$systemd_pid" 2>/dev/null
    kill -9 "$systemd_unshare" 2>/dev/null
    wait "$systemd_unshare" 2>/dev/null
    for cg in "${systemd_cgroups[@]}"; do
        for _ in $(seq 50); do
            find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null
            [ -d "$cg" ] || break
            sleep 0.1
        done
        [ -d "$cg" ] && echo "cgroup $cg is still there" >&2
    done
    systemd_unshare= systemd_pid= systemd_cgroups=()
}
