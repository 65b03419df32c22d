"""Record the raw wire bytes of the a2a-sdk 1.3.0 agent into tests/fixtures/sdk/.

Usage: record.py [--out DIR] [--base-url URL]

Without --base-url it starts tests/peers/agent.py on a free loopback port
itself. Requests are written by hand (exact bodies, like the SDK's own client
sends them) with plain httpx, and each response body is kept byte for byte:

  <iface>-<scenario>.sse   one SSE response body (CRLF line ends as sent)
  <iface>-<scenario>.json  sidecar: the request(s) and response status/type
  <iface>-unary.jsonl      JSON responses, one per line, in request order;
                           its sidecar lists the requests in the same order
  session.har              HTTP Archive 1.2 of one HTTP+JSON 1.0 session

for the interfaces jsonrpc-1.0, rest-1.0, jsonrpc-0.3 and rest-0.3.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE.parent / "fixtures" / "sdk"
TIMEOUT = 15.0


class Recorder:
    """Sends requests, keeps exact bodies, and remembers every exchange for the HAR."""

    def __init__(self, http: httpx.AsyncClient, base: str) -> None:
        self.http = http
        self.base = base.rstrip("/")
        self.har_entries: list[dict[str, Any]] | None = None

    async def exchange(
        self,
        method: str,
        path: str,
        version: str,
        body: Any = None,
        stream: bool = False,
        on_event: Any = None,
    ) -> dict[str, Any]:
        """One HTTP exchange. Returns the request, status, headers and raw body."""
        headers = {"A2A-Version": version}
        text = None
        if body is not None:
            text = json.dumps(body, separators=(",", ":"))
            headers["Content-Type"] = "application/json"
        if stream:
            headers["Accept"] = "text/event-stream"
        started = datetime.now(timezone.utc)
        request = self.http.build_request(method, self.base + path, headers=headers, content=text)
        response = await self.http.send(request, stream=True)
        raw = bytearray()
        try:
            async for piece in response.aiter_raw():
                raw.extend(piece)
                if on_event is not None and b"\r\n\r\n" in piece:
                    await on_event(bytes(raw))
        finally:
            await response.aclose()
        elapsed = (datetime.now(timezone.utc) - started).total_seconds() * 1000.0
        record = {
            "request": {
                "method": method,
                "path": path,
                "headers": headers,
                "body": text,
            },
            "response": {
                "status": response.status_code,
                "content_type": response.headers.get("content-type", ""),
            },
            "raw": bytes(raw),
            "url": str(request.url),
            "request_headers": [(k, v) for k, v in request.headers.items()],
            "response_headers": [(k, v) for k, v in response.headers.items()],
            "started": started,
            "elapsed_ms": elapsed,
            "http_version": response.http_version,
        }
        if self.har_entries is not None:
            self.har_entries.append(har_entry(record))
        return record


def har_entry(record: dict[str, Any]) -> dict[str, Any]:
    """One HAR 1.2 entry from a recorded exchange."""
    request = record["request"]
    url = httpx.URL(record["url"])
    entry_request: dict[str, Any] = {
        "method": request["method"],
        "url": record["url"],
        "httpVersion": record["http_version"],
        "cookies": [],
        "headers": [{"name": k, "value": v} for k, v in record["request_headers"]],
        "queryString": [{"name": k, "value": v} for k, v in url.params.multi_items()],
        "headersSize": -1,
        "bodySize": len(request["body"].encode()) if request["body"] is not None else 0,
    }
    if request["body"] is not None:
        entry_request["postData"] = {"mimeType": "application/json", "text": request["body"]}
    raw: bytes = record["raw"]
    return {
        "startedDateTime": record["started"].isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "time": round(record["elapsed_ms"], 3),
        "request": entry_request,
        "response": {
            "status": record["response"]["status"],
            "statusText": httpx.codes.get_reason_phrase(record["response"]["status"]),
            "httpVersion": record["http_version"],
            "cookies": [],
            "headers": [{"name": k, "value": v} for k, v in record["response_headers"]],
            "content": {
                "size": len(raw),
                "mimeType": record["response"]["content_type"],
                "text": raw.decode("utf-8"),
            },
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": len(raw),
        },
        "cache": {},
        "timings": {"send": 0, "wait": round(record["elapsed_ms"], 3), "receive": 0},
    }


def first_data(raw: bytes) -> dict[str, Any]:
    """The JSON of the first SSE event's data in `raw`."""
    for line in raw.decode("utf-8").split("\r\n"):
        if line.startswith("data:"):
            return json.loads(line[5:].strip())
    raise ValueError("no SSE data line")


def task_of(doc: dict[str, Any]) -> tuple[str, str]:
    """(task id, context id) from a first stream event or a send/get result of any shape."""
    result = doc.get("result", doc)
    for key in ("task", "statusUpdate", "artifactUpdate"):
        if key in result:
            result = result[key]
            break
    if "taskId" in result:
        return result["taskId"], result["contextId"]
    return result["id"], result["contextId"]


def follow_up_drift(name: str, first: dict[str, Any]) -> str:
    """Says whether the follow-up stream still begins without a Task (the documented drift)."""
    result = first.get("result", first)
    kind = result.get("kind") or next((k for k in ("task", "statusUpdate", "artifactUpdate", "message") if k in result), "?")
    if kind in ("task",):
        return f"{name}: follow-up stream now begins with a Task: the stream_start drift is gone, update README.md"
    return f"{name}: follow-up stream begins with {kind} (stream_start drift, as documented)"


class Interface:
    """How one binding and version spells each call."""

    def __init__(self, name: str, binding: str, version: str) -> None:
        self.name, self.binding, self.version = name, binding, version
        self.rpc_id = 0

    def _rpc(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        # The SDK's client sends string ids; 0.3 here uses numbers, so both kinds are covered.
        self.rpc_id += 1
        rpc_id: str | int = f"rpc-{self.rpc_id}" if self.version == "1.0" else self.rpc_id
        return {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}

    def message(self, key: str, text: str, task: tuple[str, str] | None) -> dict[str, Any]:
        if self.version == "1.0":
            msg: dict[str, Any] = {"messageId": f"msg-{key}", "role": "ROLE_USER", "parts": [{"text": text}]}
            if task:
                msg["taskId"], msg["contextId"] = task
            return msg
        if self.binding == "jsonrpc":
            msg = {"kind": "message", "messageId": f"msg-{key}", "role": "user", "parts": [{"kind": "text", "text": text}]}
            if task:
                msg["taskId"], msg["contextId"] = task
            return msg
        msg = {"message_id": f"msg-{key}", "role": "ROLE_USER", "content": [{"text": text}]}
        if task:
            msg["task_id"], msg["context_id"] = task
        return msg

    def send(self, key: str, text: str, stream: bool, task: tuple[str, str] | None = None) -> tuple[str, str, Any]:
        """(HTTP method, path, body) of a send or streamed send."""
        # Configurations as the SDK 1.3.0 client sends them: empty in 1.0, blocking in 0.3.
        msg = self.message(key, text, task)
        config: dict[str, Any] = {} if self.version == "1.0" else {"blocking": True}
        if self.binding == "jsonrpc":
            if self.version == "1.0":
                method = "SendStreamingMessage" if stream else "SendMessage"
            else:
                method = "message/stream" if stream else "message/send"
            return "POST", "/", self._rpc(method, {"message": msg, "configuration": config})
        prefix = "/rest" if self.version == "1.0" else "/rest/v1"
        path = prefix + ("/message:stream" if stream else "/message:send")
        if self.version == "1.0":
            return "POST", path, {"message": msg, "configuration": config}
        return "POST", path, {"request": msg, "configuration": config}

    def get_task(self, task_id: str) -> tuple[str, str, Any]:
        if self.binding == "jsonrpc":
            return "POST", "/", self._rpc("GetTask" if self.version == "1.0" else "tasks/get", {"id": task_id})
        prefix = "/rest" if self.version == "1.0" else "/rest/v1"
        return "GET", f"{prefix}/tasks/{task_id}", None

    def cancel(self, task_id: str) -> tuple[str, str, Any]:
        if self.binding == "jsonrpc":
            return "POST", "/", self._rpc("CancelTask" if self.version == "1.0" else "tasks/cancel", {"id": task_id})
        prefix = "/rest" if self.version == "1.0" else "/rest/v1"
        return "POST", f"{prefix}/tasks/{task_id}:cancel", {"id": task_id} if self.version == "1.0" else None


INTERFACES = [
    Interface("jsonrpc-1.0", "jsonrpc", "1.0"),
    Interface("rest-1.0", "rest", "1.0"),
    Interface("jsonrpc-0.3", "jsonrpc", "0.3"),
    Interface("rest-0.3", "rest", "0.3"),
]


def sidecar(records: list[dict[str, Any]], note: str) -> dict[str, Any]:
    return {
        "note": note,
        "exchanges": [{"request": r["request"], "response": r["response"]} for r in records],
    }


def write(out: Path, name: str, data: bytes) -> None:
    (out / name).write_bytes(data)


def write_json(out: Path, name: str, doc: Any) -> None:
    (out / name).write_text(json.dumps(doc, indent=1) + "\n")


async def record_interface(rec: Recorder, iface: Interface, out: Path) -> None:
    v = iface.version
    unary: list[dict[str, Any]] = []

    async def sse(scenario: str, note: str, call: tuple[str, str, Any]) -> dict[str, Any]:
        r = await rec.exchange(call[0], call[1], v, call[2], stream=True)
        if not r["response"]["content_type"].startswith("text/event-stream"):
            raise RuntimeError(f"{iface.name} {scenario}: not SSE: {r['raw'][:200]!r}")
        write(out, f"{iface.name}-{scenario}.sse", r["raw"])
        write_json(out, f"{iface.name}-{scenario}.json", sidecar([r], note))
        return r

    async def json_call(call: tuple[str, str, Any]) -> dict[str, Any]:
        r = await rec.exchange(call[0], call[1], v, call[2])
        if b"\n" in r["raw"]:
            raise RuntimeError(f"{iface.name}: a JSON response spans lines")
        unary.append(r)
        return r

    await sse("echo", "streamed echo: chunked artifact then completed (clean)", iface.send("echo", "echo hello tap world", True))
    ask = await sse("ask", "streamed send ending at input-required (clean)", iface.send("ask", "ask", True))
    ask_task = task_of(first_data(ask["raw"]))
    await sse(
        "ask-followup",
        "follow-up on the input-required task: the SDK begins it with a statusUpdate, not a Task (stream_start drift)",
        iface.send("answer", "42", True, ask_task),
    )
    drift = follow_up_drift(iface.name, first_data((out / f"{iface.name}-ask-followup.sse").read_bytes()))
    print(drift)
    await sse("fail", "artifact chunk without lastChunk, then failed (abandoned_artifact, warning)", iface.send("fail", "fail", True))
    await sse("direct", "streamed send answered by one direct Message (clean)", iface.send("direct", "direct", True))

    # long: cancel from a second connection as soon as the stream shows the task working.
    long_task: list[tuple[str, str]] = []
    canceled = asyncio.Event()

    async def on_event(raw: bytes) -> None:
        if long_task or b"WORKING" not in raw.upper():
            return
        long_task.append(task_of(first_data(raw)))
        await json_call(iface.cancel(long_task[0][0]))
        canceled.set()

    call = iface.send("long", "long", True)
    r = await rec.exchange(call[0], call[1], v, call[2], stream=True, on_event=on_event)
    if not canceled.is_set():
        raise RuntimeError(f"{iface.name}: the long task was never seen working")
    write(out, f"{iface.name}-long.sse", r["raw"])
    write_json(out, f"{iface.name}-long.json", sidecar([r], "long task canceled mid-stream by CancelTask (clean)"))

    await json_call(iface.send("unary", "echo one two three", False))
    await json_call(iface.send("unary-direct", "direct", False))
    await json_call(iface.get_task(ask_task[0]))
    await json_call(iface.get_task(long_task[0][0]))
    await json_call(iface.get_task("00000000-0000-4000-8000-000000000000"))
    await json_call(iface.cancel(ask_task[0]))
    write(out, f"{iface.name}-unary.jsonl", b"".join(r["raw"] + b"\n" for r in unary))
    write_json(
        out,
        f"{iface.name}-unary.json",
        sidecar(
            unary,
            "one exchange per .jsonl line: CancelTask of the long task (canceled), blocking send (completed), "
            "blocking send answered by a Message, GetTask of the completed ask task, GetTask of the canceled "
            "long task, GetTask of an unknown task (TaskNotFound), CancelTask of a completed task "
            "(TaskNotCancelable); all clean",
        ),
    )


async def record_har(rec: Recorder, out: Path) -> None:
    iface = Interface("rest-1.0", "rest", "1.0")
    rec.har_entries = []
    m, p, b = iface.send("har-echo", "echo hello tap world", True)
    await rec.exchange(m, p, "1.0", b, stream=True)
    m, p, b = iface.send("har-ask", "ask", True)
    ask = await rec.exchange(m, p, "1.0", b, stream=True)
    task = task_of(first_data(ask["raw"]))
    m, p, b = iface.send("har-answer", "42", True, task)
    await rec.exchange(m, p, "1.0", b, stream=True)
    m, p, b = iface.get_task(task[0])
    await rec.exchange(m, p, "1.0", b)
    m, p, b = iface.send("har-long", "long", False)
    # A long task only returns from a blocking send when it ends: ask for returnImmediately.
    b["configuration"] = {"returnImmediately": True}
    long = await rec.exchange(m, p, "1.0", b)
    long_id = task_of(json.loads(long["raw"]))[0]
    m, p, b = iface.cancel(long_id)
    await rec.exchange(m, p, "1.0", b)
    m, p, b = iface.get_task(long_id)
    await rec.exchange(m, p, "1.0", b)
    har = {
        "log": {
            "version": "1.2",
            "creator": {"name": "a2a-tap tests/peers/record.py", "version": "1"},
            "pages": [],
            "entries": rec.har_entries,
        }
    }
    rec.har_entries = None
    write_json(out, "session.har", har)


def start_agent() -> tuple[subprocess.Popen[str], str]:
    agent = subprocess.Popen(
        [sys.executable, str(HERE / "agent.py"), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    line = agent.stdout.readline() if agent.stdout else ""
    if not line.startswith("READY "):
        agent.kill()
        raise SystemExit(f"agent did not start: {line!r}")
    return agent, f"http://127.0.0.1:{line.split()[1]}"


async def main_async(base: str, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        rec = Recorder(http, base)
        for iface in INTERFACES:
            await record_interface(rec, iface, out)
        await record_har(rec, out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--base-url", default=None)
    args = parser.parse_args()
    agent = None
    base = args.base_url
    if base is None:
        agent, base = start_agent()
    try:
        asyncio.run(main_async(base, args.out))
    finally:
        if agent is not None:
            agent.terminate()
            agent.wait(timeout=10)


if __name__ == "__main__":
    main()
