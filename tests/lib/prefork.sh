# SPDX-License-Identifier: MIT
# Driving the prefork server (tests/prefork/prefork_server) from a script
# (sourced; curl is needed): its port file, and the nightly-report pattern
# of scripts/demo.sh, which sources it too.

# Waits (at most 10 s) until FILE exists and is not empty.
wait_for_file() { # FILE
    for _ in $(seq 100); do
        [ -s "$1" ] && return 0
        sleep 0.1
    done
    echo "$1 never appeared" >&2
    return 1
}

# Waits (at most 10 s) until nightly-report is free on 127.0.0.1:PORT.
wait_free() { # PORT
    for _ in $(seq 100); do
        [ "$(curl -s --max-time 5 "http://127.0.0.1:$1/status")" = free ] && return 0
        sleep 0.1
    done
    echo "nightly-report on port $1 still held after 10 s" >&2
    return 1
}

# Once nightly-report is free on 127.0.0.1:PORT, N concurrent GET
# /report: exactly one worker runs the report, under the library (the
# answers of a server without it say so).
exactly_one() { # PORT N
    local i curls=() replies
    wait_free "$1" || return 1
    replies=$(mktemp -d)
    for i in $(seq "$2"); do
        curl -s --max-time 10 "http://127.0.0.1:$1/report" >"$replies/$i" &
        curls+=($!)
    done
    wait "${curls[@]}"
    if [ "$(cat "$replies"/* | grep -c 'runs the report$')" -ne 1 ]; then
        cat "$replies"/* >&2
        rm -rf "$replies"
        return 1
    fi
    rm -rf "$replies"
}

# Starts a GET /report on 127.0.0.1:PORT once nightly-report is free (at
# most 10 s), in the background ($! is its pid): a worker holds the claim
# for the server's --report-ms.
hold_report() { # PORT
    wait_free "$1"
    curl -s --max-time 10 "http://127.0.0.1:$1/report" >/dev/null &
}
