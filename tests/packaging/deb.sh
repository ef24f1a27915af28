#!/bin/bash
# SPDX-License-Identifier: MIT
# The Debian packages (debian/), as an admin gets them: dpkg-buildpackage
# -b builds them in a copy of the tree (the tests the package build runs
# pass), lintian finds no error in them, apt-get installs them, and the
# installed files work: the demo's prefork server under the installed
# library (preloaded by name, as the manual pages say, and through the
# installed swerve-claim-preload), exactly one of 8 requests running the
# report, the installed swerve-claim listing its claim; the same server
# as a systemd unit with the installed drop-in, unchanged; python3 and
# PHP finding their bindings where they look; a program built with the
# installed header and pkg-config file.  A purge then leaves nothing: no
# package, none of their files, no directory of theirs that no other
# package owns.
#
# Building the packages takes a minute or more (the whole test, about 90 s
# on 2 cores), and installing them changes the machine, so make check skips it: scripts/test.sh runs it as
# a step of its own with SCL_DEB=1, after make check.
set -u
if [ "${SCL_DEB:-}" != 1 ]; then
    echo "SKIP: deb.sh runs as a step of scripts/test.sh (SCL_DEB=1): it builds and installs the Debian packages"
    exit 77
fi
. "$(dirname "$0")/../lib/check.sh" || exit 99
. "$(dirname "$0")/../lib/systemd.sh" || exit 99
. "$(dirname "$0")/../lib/prefork.sh" || exit 99
src=${SCL_SRCDIR:?run through make check}
if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: deb.sh: installing packages needs root"
    exit 77
fi
if ! git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
    echo "SKIP: deb.sh: $src is no git checkout (the packages are built from a copy of its tree)"
    exit 77
fi
packages=(libswerveclaim-preload swerve-claim libswerveclaim-dev python3-swerve-claim php-swerve-claim ruby-swerve-claim
    libswerve-claim-perl)
# Whether dpkg has anything of package P: installed, unpacked, or its
# configuration files.
dpkg_has() { # P
    local status
    status=$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) && [ "${status##* }" != not-installed ]
}
for p in "${packages[@]}"; do
    if dpkg_has "$p"; then
        echo "SKIP: deb.sh: $p is installed on this machine: the test would replace it, then purge it"
        exit 77
    fi
done
for tool in dpkg-buildpackage dh lintian apt-get curl; do
    command -v "$tool" >/dev/null || { fail "$tool is missing (scripts/install-deps.sh installs it)"; finish; exit; }
done
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
shim=/usr/lib/$triplet/libswerveclaim_preload.so

work=$(mktemp -d /tmp/swerve-claim-deb.XXXXXX)
chmod 755 "$work"
server_pid=
cleanup() {
    [ -n "$server_pid" ] && kill_pids "$server_pid"
    systemd_stop
    local left=()
    for p in "${packages[@]}"; do
        dpkg_has "$p" && left+=("$p")
    done
    [ ${#left[@]} -gt 0 ] && dpkg --purge "${left[@]}" >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT
copy=$work/swerve-claim
copy_checkout "$src" "$copy"

# -------------------------------------------------------------- build
# What the outer make passes on (its jobserver, TESTS=...) is not for
# the package build.
started=$(now_ns)
(cd "$copy" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u TESTS \
    timeout -k 10 1200 dpkg-buildpackage -b -us -uc -J) >"$work/build.out" 2>&1
status=$?
build_took=$((($(now_ns) - started) / 1000000000))
check "dpkg-buildpackage -b -us -uc: status $status, in $build_took s" test $status -eq 0
[ $status -eq 0 ] || { tail -n 40 "$work/build.out" >&2; finish; exit; }
debs=()
for p in "${packages[@]}"; do
    deb=$(ls "$work/${p}_"*.deb 2>/dev/null)
    check "it built $p" test -f "$deb"
    debs+=("$deb")
done
ran=$(sed -n 's/^# TOTAL: *//p' "$work/build.out") ok=$(sed -n 's/^# PASS: *//p' "$work/build.out")
check "the package build ran its tests, and they passed: ${ok:-none} of ${ran:-none}" test "${ran:-0}" -gt 0 -a "$ok" = "$ran"

started=$(now_ns)
lintian --pedantic -I "$work"/*.changes >"$work/lintian.out" 2>&1
lintian_took=$((($(now_ns) - started) / 1000000000))
echo "lintian ($lintian_took s): $(grep -cE '^E: ' "$work/lintian.out") errors, $(grep -cE '^W: ' "$work/lintian.out") warnings," \
    "$(grep -cE '^I: ' "$work/lintian.out") info, $(grep -cE '^P: ' "$work/lintian.out") pedantic"
sed 's/^/   | /' "$work/lintian.out"
check "lintian finds no error" bash -c "! grep -E '^E: ' '$work/lintian.out' >&2"
check "lintian uses every override (a stale one is a warning)" bash -c "! grep -E 'unused-override|mismatched-override' '$work/lintian.out' >&2"

# -------------------------------------------------------------- install
started=$(now_ns)
(cd "$work" && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${debs[@]/#$work/.}") \
    >"$work/install.out" 2>&1
status=$?
install_took=$((($(now_ns) - started) / 1000000000))
check "apt-get install -y ./*.deb: status $status, in $install_took s" test $status -eq 0
[ $status -eq 0 ] || { tail -n 40 "$work/install.out" >&2; finish; exit; }
for p in "${packages[@]}"; do
    check "$p is installed" bash -c "dpkg-query -W -f='\${Status}' '$p' | grep -qx 'install ok installed'"
done
files=$(dpkg -L "${packages[@]}" | sort -u)
# A Multi-Arch: same package is installed once per architecture, and each
# file outside the architecture's own directories must be the same in
# every one: nothing there may name this one's.
arch_specific() { # PACKAGE: its files elsewhere that name the architecture
    local f
    dpkg -L "$1" | while IFS= read -r f; do
        [ -f "$f" ] && [ ! -L "$f" ] || continue
        case $f in /usr/lib/"$triplet"/* | /usr/share/doc/"$1"/*) continue ;; esac
        zgrep -qF "$triplet" "$f" && echo "$f"
    done
}
for p in "${packages[@]}"; do
    [ "$(dpkg-query -W -f='${Multi-Arch}' "$p")" = same ] || continue
    named=$(arch_specific "$p")
    check "$p (Multi-Arch: same) has the same files for every architecture: ${named:-yes}" test -z "$named"
done

check "the library is in the linker's cache" bash -c "ldconfig -p | grep -qE 'libswerveclaim_preload\\.so .*=> (/usr)?/lib/$triplet/libswerveclaim_preload\\.so$'"
check "LD_PRELOAD=libswerveclaim_preload.so, by name, loads the installed one" \
    bash -c "LD_PRELOAD=libswerveclaim_preload.so cat /proc/self/maps | grep -q ' $shim$'"
check "the installed swerve-claim-preload preloads the installed library" \
    bash -c "/usr/bin/swerve-claim-preload cat /proc/self/maps | grep -q ' $shim$'"

# -------------------------------------------------------------- the demo
# scripts/demo.sh's server and requests, on the installed files.  The
# server is the package build's own (tests/prefork/prefork_server, built
# with its flags; not installed).
server=$copy/tests/prefork/prefork_server
# The installed swerve-claim's list OPTIONS... shows nightly-report held
# (at most 5 s after a request took it).
lists_the_claim() { # OPTIONS...
    for _ in $(seq 50); do
        /usr/bin/swerve-claim list "$@" --raw --noheadings -o TYPE,NAME 2>/dev/null | grep -qx 'claim nightly-report' &&
            return 0
        sleep 0.1
    done
    /usr/bin/swerve-claim list "$@" >&2
    return 1
}

mkdir "$work/base"
setsid env SWERVE_TMPDIR="$work/base" LD_PRELOAD=libswerveclaim_preload.so "$server" --workers 4 --report-ms 1500 \
    --port-file "$work/port" --pid-file "$work/pid" </dev/null >"$work/server.out" 2>&1 &
server_pid=$!
check "the demo's server starts under the installed library" wait_for_file "$work/port"
check "(it is the installed library)" grep -q " $shim$" /proc/$server_pid/maps
check "exactly one of 8 concurrent requests runs the report" exactly_one "$(cat "$work/port")" 8
hold_report "$(cat "$work/port")"
holding=$!
check "the installed swerve-claim lists the claim, from the server's pid (list -s PID)" lists_the_claim -s "$server_pid"
check "and below the base (list --base)" lists_the_claim --base "$work/base"
wait "$holding"
check "the server stops (SIGTERM)" stop_pid "$server_pid" TERM
server_pid=
check "and leaves no claim directory: $(ls -A "$work/base")" test -z "$(ls -A "$work/base")"

# -------------------------------------------------------------- systemd
# The same server as a unit with the installed drop-in, unchanged (it
# names the installed library by its path).
units=$work/units
mkdir -p "$units/scl-deb.service.d"
cat >"$units/scl-deb.service" <<UNIT
[Unit]
Description=the demo's server under the installed drop-in (tests/packaging/deb.sh)
DefaultDependencies=no

[Service]
ExecStart=$server --workers 2 --report-ms 1500 --port-file $work/unit.port
UNIT
cp /usr/share/swerve-claim/systemd/swerve-claim.conf "$units/scl-deb.service.d/"
if why=$(systemd_unavailable); then
    echo "note: the unit with the installed drop-in does not run here: $why"
else
    check "a systemd manager of the test's own starts" systemd_boot "$units" "$work/systemd.log"
    check "systemctl start, with the installed drop-in" in_systemd systemctl start scl-deb.service
    check "the unit's server answers" wait_for_file "$work/unit.port"
    check "it runs under the installed library" \
        in_systemd sh -c "grep -q ' $shim\$' /proc/\$(systemctl show -p MainPID --value scl-deb.service)/maps"
    check "exactly one of 4 concurrent requests runs the report" exactly_one "$(cat "$work/unit.port")" 4
    check "its claims are in /run/swerve-claim/scl-deb" in_systemd sh -c 'ls -d /run/swerve-claim/scl-deb/swerve-claim.*/claims >/dev/null'
    check "systemctl stop" in_systemd systemctl stop scl-deb.service
    systemd_stop
fi

# -------------------------------------------------------------- the rest
python=$(env -u PYTHONPATH /usr/bin/python3 -c 'import swerve_claim; print(swerve_claim.__file__)' 2>&1)
check "python3 imports swerve_claim from dist-packages: $python" test "$python" = /usr/lib/python3/dist-packages/swerve_claim.py
out=$(timeout 60 env -u PYTHONPATH SWERVE_TMPDIR="$work/base" LD_PRELOAD=libswerveclaim_preload.so \
    /usr/bin/python3 "$src/tests/bindings/seed_examples.py" class-1 2>&1)
check "a seed example over the installed Python binding prints the seed's output" \
    diff -u "$src/tests/bindings/expected/class-1.txt" - <<<"$out"
php=$(timeout 60 env SWERVE_TMPDIR="$work/base" LD_PRELOAD=libswerveclaim_preload.so php -n -d extension=ffi -d ffi.enable=1 -r '
    require "Swerve/Swerve.php";
    $claim = Swerve\Swerve::claim("deb")->acquire();
    echo $claim ? "held" : "not held", " ", implode(" ", get_included_files()), "\n";' 2>&1)
check "PHP finds Swerve/Swerve.php on its include_path, and claims through it: $php" \
    test "$php" = "held /usr/share/php/Swerve/Swerve.php"

ruby=$(timeout 60 env -u RUBYLIB SWERVE_TMPDIR="$work/base" LD_PRELOAD=libswerveclaim_preload.so ruby -e '
    require "swerve_claim"
    claim = SwerveClaim.claim("deb").acquire
    puts "#{claim ? "held" : "not held"} #{$LOADED_FEATURES.grep(/swerve_claim/).join(" ")}"' 2>&1)
check "Ruby requires swerve_claim from vendor_ruby, and claims through it: $ruby" \
    test "$ruby" = "held /usr/lib/ruby/vendor_ruby/swerve_claim.rb"
perl=$(timeout 60 env -u PERL5LIB SWERVE_TMPDIR="$work/base" LD_PRELOAD=libswerveclaim_preload.so perl -e '
    use Swerve::Claim;
    my $claim = Swerve::Claim->new("deb")->acquire;
    print(($claim ? "held" : "not held"), " $INC{q(Swerve/Claim.pm)}\n");' 2>&1)
check "Perl uses Swerve::Claim from /usr/share/perl5, and claims through it: $perl" \
    test "$perl" = "held /usr/share/perl5/Swerve/Claim.pm"

check "pkg-config names the installed library" test "$(pkg-config --variable=preload swerve-claim)" = "$shim"
cat >"$work/loader.c" <<'C'
#include <stdio.h>
#include <swerve/claim-loader.h>
int main(void)
{
    struct swerve_claim_api api;
    if (!swerve_claim_load(&api))
        return 1;
    struct swerve_claim *c = api.new_claim("deb");
    printf("%s\n", c && api.acquire(c, 0.0) ? "held" : "not held");
    api.free(c);
    return 0;
}
C
check "a program builds with the installed header and pkg-config file" \
    bash -c "cc -o '$work/loader' '$work/loader.c' \$(pkg-config --cflags --libs swerve-claim)"
check "and claims under the installed library" \
    test "$(SWERVE_TMPDIR=$work/base LD_PRELOAD=libswerveclaim_preload.so "$work/loader")" = held
for page in swerve-claim swerve-claim-preload libswerveclaim_preload swerve_claim swerve_claim_acquire; do
    check "man finds $page" bash -c "man -w '$page' | grep -q '^/usr/share/man/'"
done
for f in /usr/share/doc/swerve-claim/security.md.gz /usr/share/doc/swerve-claim/troubleshooting.md.gz \
    /usr/share/bash-completion/completions/swerve-claim /usr/lib/tmpfiles.d/swerve-claim.conf; do
    check "$f is installed" test -f "$f"
done

# -------------------------------------------------------------- purge
started=$(now_ns)
DEBIAN_FRONTEND=noninteractive apt-get purge -y "${packages[@]}" >"$work/purge.out" 2>&1
status=$?
purge_took=$((($(now_ns) - started) / 1000000000))
check "apt-get purge: status $status, in $purge_took s" test $status -eq 0
for p in "${packages[@]}"; do
    check "$p is gone" bash -c "$(declare -f dpkg_has); ! dpkg_has '$p'"
done
left=()
while IFS= read -r f; do
    [ "$f" = /. ] && continue
    [ -e "$f" ] || [ -L "$f" ] || continue
    # A directory another package owns too stays.
    [ -d "$f" ] && [ ! -L "$f" ] && dpkg-query -S "$f" >/dev/null 2>&1 && continue
    left+=("$f")
done <<<"$files"
check "nothing of theirs is left: ${left[*]:-nothing}" test ${#left[@]} -eq 0
check "(of $(wc -l <<<"$files") paths they had)" test "$(wc -l <<<"$files")" -gt 40
check "no compiled Python module is left" bash -c "! ls /usr/lib/python3/dist-packages/__pycache__/swerve_claim* 2>/dev/null"
check "the linker's cache no longer has the library" bash -c "! ldconfig -p | grep -q libswerveclaim_preload"

echo "deb.sh: the package build took $build_took s, lintian $lintian_took s, apt-get install $install_took s, purge $purge_took s"
finish
