#!/bin/bash
# SPDX-License-Identifier: MIT
# The bash completion of swerve-claim and swerve-claim-preload, through
# bash-completion itself: commands, each command's options, columns, and
# the command line after `run ... --`.
set -u
. "$(dirname "$0")/../lib/check.sh" || exit 99
# The tool itself (this build's) is the completion's words[0]: -o's
# columns are what its --help says, of the store this environment uses.
PATH=${SCL_HELPERS:?run through make check}/..:$PATH
unset SWERVE_CLAIM_STORE
. "$(dirname "$0")/../lib/completion.sh" || exit 99
completes() { # WANTED WORD...: completing the last WORD offers exactly WANTED
    local want=$1 got
    shift
    got=$(offered "$@" | tr '\n' ' ')
    if [ "$got" = "$want " ]; then
        pass
    else
        fail "'$*' completes to '$got', not '$want'"
    fi
}
completes "list" swerve-claim li
completes "release run" swerve-claim r
completes "--noheadings --notruncate" swerve-claim list --no
completes "--noheadings --notruncate" swerve-claim --base /tmp list --no
completes "--dry-run" swerve-claim gc --d
completes "--verbose" swerve-claim run --v
completes "--pid" swerve-claim drain --p
completes "db drain" swerve-claim d
completes "init" swerve-claim db i
completes "SERVER SINCE STATE" swerve-claim list -o S
completes "ROLE" swerve-claim list -o R
# The PostgreSQL store's, with its setting (--help reaches no server)
SWERVE_CLAIM_STORE=postgresql://127.0.0.1:1/x completes "SELF-REPORTED SESSION SINCE" swerve-claim list -o S
SWERVE_CLAIM_STORE=postgresql://127.0.0.1:1/x completes "REPORTED-HOST REPORTED-PID ROLE" swerve-claim list -o R
SWERVE_CLAIM_STORE=postgresql://127.0.0.1:1/x completes "SELF-REPORTED SESSION" swerve-claim history -o S
completes "--dedicated" swerve-claim db init --d
completes "check" swerve-claim db c
completes "--base --help" swerve-claim db check --
completes "--base --dedicated --help" swerve-claim db init --
completes "--library" swerve-claim-preload --li
completes "help history" swerve-claim h
completes "release run" swerve-claim help r
completes "history" swerve-claim help hi
completes "--output --output-all" swerve-claim history --outp
completes "DIR DURATION" swerve-claim history -o D
completes "--help" swerve-claim list --he
completes "metrics" swerve-claim me
completes "--output" swerve-claim metrics --ou
completes "metrics" swerve-claim help m
# metrics --output takes a file (a *.prom for the collector), not columns
prom_dir=$(mktemp -d)
touch "$prom_dir/swerve-claim.prom"
completes "$prom_dir/swerve-claim.prom" swerve-claim metrics --output "$prom_dir/sw"
completes "STATE" swerve-claim list --output ST
rm -rf "$prom_dir"
completes "NAME,PID" swerve-claim list -o NAME,PI
completes "DIR" swerve-claim list -o D
completes "SERVER" swerve-claim history -o S
# list's -w takes its seconds only attached: the next word is an option
completes "--watch" swerve-claim list -w --wa
# What the tool itself says (this build's): its commands, each one's long
# options, and the columns list and history have, are all offered.
commands=$(swerve-claim --help | sed -n '/^Commands:/,/^$/s/^  \([a-z]*\) .*/\1/p' | sort | tr '\n' ' ' | sed 's/ $//')
check "the whole help lists commands" test -n "$commands"
completes "$(printf '%s\n' $commands help --base --help --version | sort | tr '\n' ' ' | sed 's/ $//')" swerve-claim ""
completes "$commands" swerve-claim help ""
for cmd in $commands; do
    completes "$(swerve-claim "$cmd" --help | grep -o -- '--[a-z][a-z-]*' | sort -u | tr '\n' ' ' | sed 's/ $//')" \
        swerve-claim "$cmd" --
done
for cmd in list history; do
    for column in $(swerve-claim "$cmd" -o NOPE 2>&1 | sed -n 's/.*(columns: \([^)]*\)).*/\1/p' | tr ',' ' '); do
        completes "$column" swerve-claim "$cmd" -o "$column"
    done
done
# Claim names and members' pids, from the tool itself (this build's, on
# PATH as the completion's words[0] names it), in the --base given.
base=$(mktemp -d)
swerve-claim --base "$base" run completed-name -- sleep 30 &
runner=$!
trap 'kill_pids $runner $(pgrep -P $runner); rm -rf "$base"' EXIT
for _ in $(seq 100); do
    holder=$(swerve-claim --base "$base" list --raw --noheadings -o TYPE,PID | awk '$1 == "claim" { print $2 }')
    [ -n "$holder" ] && break
    sleep 0.05
done
completes "completed-name" swerve-claim --base "$base" list --name comp
completes "completed-name" swerve-claim --base "$base" release --force comp
completes "completed-name" swerve-claim --base "$base" history comp
members=$(swerve-claim --base "$base" list --raw --noheadings -o TYPE,PID | awk '$1 == "process" { print $2 }' |
    sort -u | tr '\n' ' ' | sed 's/ $//')
check "the holder is a listed member" test -n "$members"
completes "$members" swerve-claim --base "$base" list -p ""
completes "$holder" swerve-claim --base "$base" gc -s "$holder"
completes "$members" swerve-claim --base "$base" drain -p ""
# After `run NAME --` and after the launcher's options: the command's own completion
completes "$(compgen -c -- nproc | sort -u | tr '\n' ' ' | sed 's/ $//')" swerve-claim run x -- npro
completes "$(compgen -c -- nproc | sort -u | tr '\n' ' ' | sed 's/ $//')" swerve-claim-preload npro
finish
