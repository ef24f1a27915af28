# SPDX-License-Identifier: MIT
# The client of tests/real-servers/hypnotoad.sh: COUNT concurrent GET
# /report[?QUERY] on 127.0.0.1:PORT while a GET /ping goes every ~50 ms
# (each on a connection of its own, so that either worker may take it),
# from the first report sent until the last one answered (60 s at most).
# Prints every answer, then its figures as KEY=VALUE lines: ran, gave_up,
# errors, overlaps (a report that started before the one before it
# ended); pings, ping_max_ms and ping_median_ms of the pings sent once
# every report was in its route (waiting, or holding the claim);
# burst_pings and burst_ping_max_ms of those sent before (they may wait
# behind the routing of the burst of reports in their worker);
# all_ping_max_ms of them all;
# ping_workers (how many workers answered pings), pings_beside_waiter
# (pings a worker answered while one of its own reports waited for the
# claim).
# usage: python3 hypnotoad_probe.py PORT COUNT [QUERY]
import http.client
import statistics
import sys
import threading
import time

port, count = int(sys.argv[1]), int(sys.argv[2])
query = "?" + sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else ""


def get(path, timeout):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path, headers={"Connection": "close"})
        return conn.getresponse().read().decode().strip()
    except OSError as e:
        return "error %s" % e
    finally:
        conn.close()


reports, pings = [], []
done = threading.Event()


def report():
    reports.append(get("/report" + query, 60))


def pinger():
    deadline = time.monotonic() + 60
    while not done.is_set() and time.monotonic() < deadline:
        sent, at = time.monotonic(), time.time()
        answer = get("/ping", 60)
        took = time.monotonic() - sent
        pings.append((took * 1000, answer, at))
        time.sleep(max(0.0, 0.05 - took))


ping_thread = threading.Thread(target=pinger)
ping_thread.start()
threads = [threading.Thread(target=report) for _ in range(count)]
for t in threads:
    t.start()
for t in threads:
    t.join(70)
done.set()
ping_thread.join(70)

for r in reports:
    print(r)
for ms, answer, at in pings:
    print("%.1f ms: %s (sent %.6f)" % (ms, answer, at))

ran = sorted((float(f[3]), float(f[4]), f[1]) for f in (r.split() for r in reports) if f[0] == "report")
waiting = [(f[1], float(f[2]), float(f[3])) for f in (r.split() for r in reports) if f[0] == "report"]
overlaps = sum(1 for a, b in zip(ran, ran[1:]) if b[0] < a[1])
answered = [a.split() for _, a, _ in pings if a.startswith("pong ")]
beside = sum(1 for p in answered if any(pid == p[1] and asked < float(p[2]) < start for pid, asked, start in waiting))
# The pings sent once every report was in its route (the server's clock
# and ours are the machine's): those sent before may wait behind the
# parsing and routing of the burst of reports in the same worker.
last_in = max((asked for _, asked, _ in waiting), default=0.0)
times = [ms for ms, _, at in pings if at >= last_in]
burst = [ms for ms, _, at in pings if at < last_in]
print("ran=%d" % len(ran))
print("gave_up=%d" % sum(1 for r in reports if r.startswith("gave up")))
print("errors=%d" % (len(reports) - len(ran) - sum(1 for r in reports if r.startswith("gave up"))
                     + sum(1 for _, a, _ in pings if not a.startswith("pong "))))
print("overlaps=%d" % overlaps)
print("pings=%d" % len(times))
print("burst_pings=%d" % len(burst))
print("burst_ping_max_ms=%.0f" % (max(burst) if burst else -1))
print("ping_max_ms=%.0f" % (max(times) if times else -1))
print("all_ping_max_ms=%.0f" % max([ms for ms, _, _ in pings] or [-1]))
print("ping_median_ms=%.1f" % (statistics.median(times) if times else -1))
print("ping_workers=%d" % len({p[1] for p in answered}))
print("pings_beside_waiter=%d" % beside)
