#!/usr/bin/env python3
"""The figures of the id and compression bounds against a built a2a-tap
(issue 34, classes 1 and 3), on 127.0.0.1 only, bounded in time:

  1. RSS growth after CALLS SendMessage calls whose 900 KiB contextId the
     agent keeps, and CALLS ListTasks answers naming three 1.3 MB task ids
     (target: under 16 MB for 1,000 calls);
  2. how late the next exchange is judged after a 2,000 MB gzip SSE bomb
     (18 MB on the wire), with the default [analysis] settings (target:
     under a second).

usage: scripts/attack-figures.py target/release/a2a-tap [CALLS [WARM]]

The RSS growth is measured after WARM calls of each (default 2), which
allocate the buffers one call needs (bounded, kept for reuse).
"""

import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def bomb_gzip(text: bytes, plain_bytes: int) -> bytes:
    """A gzip member: `text` once as fixed-Huffman literals, then 258-byte
    back-references repeating it (CRC left zero)."""
    out = bytearray(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff")
    state = [0, 0]  # acc, bits

    def put(value, count):
        acc, n = state
        acc |= value << n
        n += count
        while n >= 8:
            out.append(acc & 0xFF)
            acc >>= 8
            n -= 8
        state[0], state[1] = acc, n

    def code(c, length):
        put(int(format(c, f"0{length}b")[::-1], 2), length)

    def dist_code(d):
        base = 1
        for c in range(30):
            extra = 0 if c < 4 else c // 2 - 1
            if d < base + (1 << extra):
                return c, base, extra
            base += 1 << extra
        raise ValueError(d)

    def repeat(d):
        code(0xC5, 8)
        c, base, extra = dist_code(d)
        code(c, 5)
        put(d - base, extra)

    put(1, 1)
    put(1, 2)
    for b in text:
        code(0x30 + b, 8) if b < 144 else code(0x190 + b - 144, 9)
    # A back-reference is 13 bits and the distance's extra bits: `per`
    # of them fill whole bytes, so after the first such group every group
    # is the same bytes.
    bits = 13 + dist_code(len(text))[2]
    per = 8 // __import__("math").gcd(bits, 8)
    groups = max(2, (plain_bytes - len(text)) // (258 * per))
    for _ in range(per):
        repeat(len(text))
    n1 = len(out)
    for _ in range(per):
        repeat(len(text))
    pattern = bytes(out[n1:])
    out.extend(pattern * (groups - 2))
    code(0, 7)
    if state[1]:
        out.append(state[0] & 0xFF)
    out.extend(b"\0" * 8)
    return bytes(out)


def rpc(rid, result):
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode()


def task(tid, ctx, state):
    return {"task": {"id": tid, "contextId": ctx, "status": {"state": state}}}


EVENT = b"data: " + rpc(1, task("t-bomb", "c", "TASK_STATE_WORKING")) + b"\n\n"
BOMB = bomb_gzip(EVENT, 2000 << 20)


def long(tag, i, n):
    s = f"{tag}-{i}-"
    return s + "x" * (n - len(s))


class Agent(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["content-length"])))
        method, rid, params = req["method"], req["id"], req.get("params", {})
        headers = {"content-type": "application/json"}
        if method == "SendMessage":
            m = params["message"]
            body = rpc(rid, task("t-" + m["messageId"], m["contextId"], "TASK_STATE_COMPLETED"))
        elif method == "ListTasks":
            ts = [{"id": long("task", rid * 3 + k, 1300 * 1024), "contextId": "c",
                   "status": {"state": "TASK_STATE_WORKING"}} for k in range(3)]
            body = rpc(rid, {"tasks": ts})
        elif method == "SendStreamingMessage":
            body = BOMB
            headers = {"content-type": "text/event-stream", "content-encoding": "gzip"}
        else:
            body = rpc(rid, task(params["id"], "c", "TASK_STATE_UNSPECIFIED"))
        self.send_response(200)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def call(port, rid, method, params):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    c.request("POST", "/", body, {"content-type": "application/json", "A2A-Version": "1.0"})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def main():
    binary = sys.argv[1]
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    warm = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    agent = ThreadingHTTPServer(("127.0.0.1", 0), Agent)
    threading.Thread(target=agent.serve_forever, daemon=True).start()
    tmp = tempfile.mkdtemp()
    audit = os.path.join(tmp, "audit.jsonl")
    cfg = os.path.join(tmp, "config.toml")
    with open(cfg, "w") as f:
        f.write(f'listen = "127.0.0.1:0"\nadmin = "127.0.0.1:0"\n'
                f'upstream = "http://127.0.0.1:{agent.server_port}"\naudit_log = "{audit}"\n'
                '[proxy]\ndrain_delay = "0s"\n')
    err = open(os.path.join(tmp, "stderr"), "w+")
    p = subprocess.Popen([binary, "--config", cfg], stderr=err, stdout=subprocess.DEVNULL)
    try:
        deadline = time.time() + 15
        port = None
        while port is None and time.time() < deadline:
            err.seek(0)
            m = re.search(r"listen=127\.0\.0\.1:(\d+)", err.read())
            port = int(m.group(1)) if m else None
            time.sleep(0.05)
        assert port, "a2a-tap did not start"
        msg = lambda i: {"message": {"messageId": f"m{i}", "role": "ROLE_USER",
                                     "contextId": long("ctx", i, 900 * 1024),
                                     "parts": [{"text": "hi"}]}}
        for i in range(warm):
            call(port, i, "SendMessage", msg(i))
            call(port, i, "ListTasks", {})
        time.sleep(1)
        before = rss_kib(p.pid)
        t = time.time()
        for i in range(warm, calls + warm):
            call(port, i, "SendMessage", msg(i))
            call(port, i, "ListTasks", {})
        time.sleep(2)
        after = rss_kib(p.pid)
        print(f"id attack: {calls} calls of each (after {warm}) in {time.time() - t:.1f} s, "
              f"RSS {before / 1024:.1f} -> {after / 1024:.1f} MB (+{(after - before) / 1024:.1f} MB)")
        status, body = call(port, 1, "SendStreamingMessage",
                            {"message": {"messageId": "bomb", "role": "ROLE_USER",
                                         "parts": [{"text": "hi"}]}})
        assert status == 200 and body == BOMB
        call(port, 2, "GetTask", {"id": "t-next"})
        t = time.time()
        while time.time() - t < 120:
            with open(audit) as f:
                if "unspecified_state" in f.read():
                    break
            time.sleep(0.002)
        print(f"compression bomb ({len(BOMB) / 1e6:.1f} MB gzip, 2,000 MB plain): "
              f"the next exchange judged {1000 * (time.time() - t):.0f} ms after its answer")
    finally:
        p.terminate()
        p.wait(timeout=30)
        agent.shutdown()


if __name__ == "__main__":
    main()
