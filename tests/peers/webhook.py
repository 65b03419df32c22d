"""A push-notification webhook receiver for the real-peer tests (stdlib only).

Usage: webhook.py --record FILE [--port N] [--status N]

Listens on 127.0.0.1 (`--port 0`, the default, picks a free port), prints
`READY <port>` on stdout once it accepts connections, and answers every
request with status `--status` (default 200) and an empty JSON object
(`{}`, `application/json`). Each request is appended to `--record FILE` as
one JSON line, written before the answer is sent:

  {"method", "path", "headers": [[name, value], ...], "body"}

headers in the order received, names as sent; body as text (UTF-8,
undecodable bytes replaced). Runs until killed.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver(BaseHTTPRequestHandler):
    """Records each request and answers with the server's status."""

    protocol_version = "HTTP/1.1"
    server: "WebhookServer"

    def handle_any(self) -> None:
        body = self.read_body()
        record = {
            "method": self.command,
            "path": self.path,
            "headers": [[name, value] for name, value in self.headers.items()],
            "body": body.decode("utf-8", errors="replace"),
        }
        self.server.write(record)
        answer = b"{}"
        self.send_response(self.server.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def read_body(self) -> bytes:
        """The request body, by Content-Length or chunked transfer coding."""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            body = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return bytes(body)
                body.extend(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    do_POST = handle_any
    do_PUT = handle_any
    do_GET = handle_any
    do_DELETE = handle_any

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib's name
        pass  # quiet: the record file is the log


class WebhookServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, record: str, status: int) -> None:
        super().__init__(("127.0.0.1", port), Receiver)
        self.record = record
        self.status = status
        self.lock = threading.Lock()

    def write(self, record: dict[str, object]) -> None:
        line = json.dumps(record, separators=(",", ":")) + "\n"
        with self.lock, open(self.record, "a", encoding="utf-8") as out:
            out.write(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--record", required=True, help="append one JSON line per request")
    parser.add_argument("--status", type=int, default=200, help="status of every answer (default 200)")
    args = parser.parse_args()
    if not 200 <= args.status <= 599:
        parser.error(f"--status {args.status}: expected an HTTP status from 200 to 599")
    server = WebhookServer(args.port, args.record, args.status)
    print(f"READY {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
