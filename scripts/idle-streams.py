#!/usr/bin/env python3
"""Memory and descriptors a2a-tap spends per idle SSE stream.

Starts an SSE upstream (asyncio, no dependencies) that answers every request
with one event and then stays silent, starts the a2a-tap binary in front of
it, opens N streams through the proxy (HTTP/1.1, each on its own connection),
and prints the proxy's RSS and open descriptors before and after, per stream.
Loopback only; it stops by itself.

  scripts/idle-streams.py BINARY [N]
"""

import asyncio
import os
import resource
import subprocess
import sys
import tempfile
import time

EVENT = b'data: {"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}}\n\n'
REQUEST = (b'POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\na2a-version: 1.0\r\n'
           b'content-length: %d\r\n\r\n%s')
BODY = b'{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"hi"}]}}}'


async def upstream(reader, writer):
    try:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
        writer.write(b"%x\r\n%s\r\n" % (len(EVENT), EVENT))
        await writer.drain()
        await asyncio.sleep(3600)
    except (Exception, asyncio.CancelledError):
        pass


def status(pid):
    with open(f"/proc/{pid}/status") as f:
        rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
    return rss, len(os.listdir(f"/proc/{pid}/fd"))


async def main(binary, n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    server = await asyncio.start_server(upstream, "127.0.0.1", 0, backlog=4096)
    up = server.sockets[0].getsockname()[1]
    with tempfile.TemporaryDirectory() as d:
        listen, admin = 18180 + os.getpid() % 1000, 19180 + os.getpid() % 1000
        cfg = os.path.join(d, "c.toml")
        with open(cfg, "w") as f:
            f.write(f'listen = "127.0.0.1:{listen}"\nadmin = "127.0.0.1:{admin}"\n'
                    f'upstream = "http://127.0.0.1:{up}"\naudit_log = "{d}/a.jsonl"\n')
        proc = subprocess.Popen([binary, "--config", cfg], stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                try:
                    r, w = await asyncio.open_connection("127.0.0.1", listen)
                    w.close()
                    break
                except OSError:
                    await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)
            before = status(proc.pid)
            conns = []
            for i in range(n):
                r, w = await asyncio.open_connection("127.0.0.1", listen)
                w.write(REQUEST % (len(BODY), BODY))
                conns.append((r, w))
                if i % 200 == 199:
                    await asyncio.sleep(0.05)
            for r, _ in conns:
                await asyncio.wait_for(r.readuntil(b"TASK_STATE_WORKING"), 30)
            await asyncio.sleep(1.0)
            after = status(proc.pid)
            drss, dfd = after[0] - before[0], after[1] - before[1]
            print(f"{n} idle streams: RSS {before[0]} -> {after[0]} KiB (+{drss}, "
                  f"{drss / n:.1f} KiB a stream); descriptors {before[1]} -> {after[1]} "
                  f"(+{dfd}, {dfd / n:.2f} a stream)")
            for _, w in conns:
                w.close()
        finally:
            proc.kill()
            proc.wait(10)
            server.close()


if __name__ == "__main__":
    try:
        asyncio.run(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 2000))
    except KeyboardInterrupt:
        pass
