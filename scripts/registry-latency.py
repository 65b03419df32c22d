#!/usr/bin/env python3
"""Time from a task's terminal state passing replica A to replica B knowing it.

Usage: registry-latency.py A_URL B_ADMIN_URL COUNT

Sends COUNT blocking SendMessage requests to A (each answered with a new,
completed task: one fact), one at a time; after each answer, polls B's
/metrics until a2a_registry_facts_total{direction="received"} has grown.
Prints the median, p90, p99 and max, and the polling period (the
resolution). Standard library only.
"""
import http.client
import json
import statistics
import sys
import time
from urllib.parse import urlparse

BODY = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
    "params": {"message": {"role": "ROLE_USER", "messageId": "m-1",
                           "parts": [{"text": "book a flight"}]},
               "configuration": {"blocking": True}},
})


def conn(url):
    u = urlparse(url)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=10), u.path or "/"


def received(c, path):
    c.request("GET", path)
    text = c.getresponse().read().decode()
    for line in text.splitlines():
        if line.startswith('a2a_registry_facts_total{direction="received"}'):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def main():
    a_url, b_admin, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    a, a_path = conn(a_url)
    b, _ = conn(b_admin)
    polls, waits = 0, []
    start = time.perf_counter()
    for _ in range(count):
        before = received(b, "/metrics")
        a.request("POST", a_path, BODY, {"Content-Type": "application/json"})
        a.getresponse().read()
        passed = time.perf_counter()
        while received(b, "/metrics") <= before:
            polls += 1
            if time.perf_counter() - passed > 5:
                sys.exit("B never heard of the fact within 5 s")
        waits.append((time.perf_counter() - passed) * 1000)
    elapsed = time.perf_counter() - start
    waits.sort()
    pick = lambda q: waits[min(len(waits) - 1, int(q * len(waits)))]
    poll_ms = 1000 * elapsed / max(1, polls + 2 * count)
    print(f"terminal on A -> known on B over {count} tasks: median {statistics.median(waits):.2f} ms, "
          f"p90 {pick(0.90):.2f} ms, p99 {pick(0.99):.2f} ms, max {waits[-1]:.2f} ms "
          f"(B polled every ~{poll_ms:.2f} ms)")


if __name__ == "__main__":
    main()
