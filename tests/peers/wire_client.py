"""Play the real-peer scenarios on the wire against any A2A 1.0 agent and print what it answered.

Usage: wire_client.py BASE_URL [--record FILE]

The client of the peers that ship no client of their own in these tests (the
Rust SDK's agent in rust/, the fasta2a agent in fasta2a/): plain httpx, no
SDK between the agent's bytes and the outcome, so what is compared is what
the agent sent. Fetches the agent card at BASE_URL and, for each 1.0
interface it names (JSON-RPC, HTTP+JSON), plays:

  echo          streamed send, chunked artifact, completed
  echo-unary    blocking send of the same
  ask           streamed send to input-required, a streamed follow-up on the
                same task (taskId and contextId), then GetTask
  fail          streamed send: artifact chunk left open, failed
  long          streamed send; CancelTask while it works; the stream's end;
                GetTask; CancelTask again (re-cancel)
  subscribe     streamed send of `long`; SubscribeToTask while it works;
                CancelTask; both streams to their end
  direct        streamed send answered by a direct Message
  errors        GetTask of an unknown task, CancelTask of a completed task

Prints ONE JSON document (sorted keys): per "BINDING/VERSION" and scenario,
event types, states, artifact texts and flags, roles, error codes: no ids,
timestamps or ports, so a run straight to the agent and a run through a proxy
compare equal. `--record FILE` appends one JSON line per HTTP exchange (the
card fetch too), {"method", "path", "status", "content_type", "body_b64"},
with the response body bytes as received.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import sys
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx

SCENARIO_TIMEOUT = 20.0
HTTP_TIMEOUT = 15.0
UNKNOWN_TASK = "00000000-0000-4000-8000-000000000000"
HEADERS = {"A2A-Version": "1.0"}


# --- recording (as tests/peers/client.py) -----------------------------------


class _RecordedStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, record: dict[str, Any], path: str) -> None:
        self.inner, self.record, self.path = inner, record, path
        self.body = bytearray()
        self.done = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            self.body.extend(chunk)
            yield chunk

    async def aclose(self) -> None:
        try:
            await self.inner.aclose()
        finally:
            if not self.done:
                self.done = True
                self.record["body_b64"] = base64.b64encode(bytes(self.body)).decode("ascii")
                with open(self.path, "a", encoding="utf-8") as out:
                    out.write(json.dumps(self.record, separators=(",", ":")) + "\n")


class RecordingTransport(httpx.AsyncBaseTransport):
    def __init__(self, path: str) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.path = path

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        record = {
            "method": request.method,
            "path": request.url.path,
            "status": response.status_code,
            "content_type": response.headers.get("content-type"),
        }
        assert isinstance(response.stream, httpx.AsyncByteStream)
        return httpx.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_RecordedStream(response.stream, record, self.path),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


# --- outcomes -----------------------------------------------------------------


def parts_text(parts: Any) -> str:
    return "".join(p.get("text", "") for p in parts or [] if isinstance(p, dict))


def describe_event(event: Any) -> dict[str, Any]:
    """One StreamResponse (or a SendMessage result), without ids or timestamps."""
    if not isinstance(event, dict):
        return {"type": "not an object"}
    if "task" in event:
        task = event["task"]
        return {
            "type": "task",
            "state": task.get("status", {}).get("state"),
            "artifacts": [parts_text(a.get("parts")) for a in task.get("artifacts") or []],
        }
    if "statusUpdate" in event:
        status = event["statusUpdate"].get("status", {})
        out: dict[str, Any] = {"type": "statusUpdate", "state": status.get("state")}
        if "message" in status:
            out["message"] = parts_text(status["message"].get("parts"))
        return out
    if "artifactUpdate" in event:
        update = event["artifactUpdate"]
        return {
            "type": "artifactUpdate",
            "artifact": update.get("artifact", {}).get("name"),
            "text": parts_text(update.get("artifact", {}).get("parts")),
            "append": update.get("append", False),
            "lastChunk": update.get("lastChunk", False),
        }
    if "message" in event:
        message = event["message"]
        return {"type": "message", "role": message.get("role"), "text": parts_text(message.get("parts"))}
    return {"type": "other", "keys": sorted(event)}


def describe_task(task: Any) -> dict[str, Any]:
    if not isinstance(task, dict):
        return {"notATask": True}
    return {
        "state": task.get("status", {}).get("state"),
        "artifacts": {a.get("name"): parts_text(a.get("parts")) for a in task.get("artifacts") or []},
        "historyRoles": [m.get("role") for m in task.get("history") or []],
    }


class Stream:
    """What one streamed call yielded; keeps the task's ids aside."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.task_id = ""
        self.context_id = ""
        self.artifacts: dict[str, str] = {}
        self.final_state: str | None = None
        self.error: Any = None

    def take(self, event: Any) -> None:
        self.events.append(describe_event(event))
        if not isinstance(event, dict):
            return
        if "task" in event:
            task = event["task"]
            self.task_id, self.context_id = task.get("id", ""), task.get("contextId", "")
            self.final_state = task.get("status", {}).get("state")
        elif "statusUpdate" in event:
            update = event["statusUpdate"]
            self.task_id = self.task_id or update.get("taskId", "")
            self.context_id = self.context_id or update.get("contextId", "")
            self.final_state = update.get("status", {}).get("state")
        elif "artifactUpdate" in event:
            update = event["artifactUpdate"]
            self.task_id = self.task_id or update.get("taskId", "")
            self.context_id = self.context_id or update.get("contextId", "")
            name = update.get("artifact", {}).get("name")
            text = parts_text(update.get("artifact", {}).get("parts"))
            self.artifacts[name] = self.artifacts.get(name, "") + text if update.get("append") else text

    def outcome(self) -> dict[str, Any]:
        out: dict[str, Any] = {"events": self.events, "finalState": self.final_state, "artifacts": self.artifacts}
        if self.error is not None:
            out["error"] = self.error
        return out


def user_message(text: str, task_id: str = "", context_id: str = "") -> dict[str, Any]:
    message: dict[str, Any] = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
    if task_id:
        message["taskId"] = task_id
    if context_id:
        message["contextId"] = context_id
    return message


# --- the two bindings ------------------------------------------------------------


class Binding:
    """One 1.0 interface: each call returns (result, error), error a short dict."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http, self.url = http, url.rstrip("/")

    async def sse(self, method: str, url: str, body: Any) -> AsyncIterator[Any]:
        async with self.http.stream(method, url, json=body, headers=HEADERS) as response:
            if response.status_code != 200 or "text/event-stream" not in response.headers.get("content-type", ""):
                await response.aread()
                yield ("http-error", response.status_code, error_of(response))
                return
            data: list[str] = []
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    data.append(line[5:].lstrip(" "))
                elif line == "" and data:
                    yield json.loads("\n".join(data))
                    data = []
            if data:
                yield json.loads("\n".join(data))


def error_of(response: httpx.Response) -> Any:
    try:
        body = response.json()
    except ValueError:
        return {"status": response.status_code}
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        error = body["error"]
        return {"status": response.status_code, "code": error.get("code"), "errorStatus": error.get("status")}
    return {"status": response.status_code}


class JsonRpc(Binding):
    name = "JSONRPC/1.0"
    next_id = 0

    def envelope(self, method: str, params: Any) -> dict[str, Any]:
        JsonRpc.next_id += 1
        return {"jsonrpc": "2.0", "id": JsonRpc.next_id, "method": method, "params": params}

    async def call(self, method: str, params: Any) -> tuple[Any, Any]:
        response = await self.http.post(self.url, json=self.envelope(method, params), headers=HEADERS)
        try:
            body = response.json()
        except ValueError:
            return None, {"http": response.status_code}
        if not isinstance(body, dict):
            return None, {"http": response.status_code, "body": "not an object"}
        if "error" in body:
            return None, {"code": body["error"].get("code")}
        return body.get("result"), None

    async def stream(self, method: str, params: Any) -> AsyncIterator[tuple[Any, Any]]:
        async for frame in self.sse("POST", self.url, self.envelope(method, params)):
            if isinstance(frame, tuple):
                yield None, {"http": frame[1]}
            elif isinstance(frame, dict) and "error" in frame:
                yield None, {"code": frame["error"].get("code")}
            elif isinstance(frame, dict):
                yield frame.get("result"), None
            else:
                yield None, {"frame": "not an object"}

    async def send(self, message: Any, stream: bool) -> AsyncIterator[tuple[Any, Any]]:
        if stream:
            async for item in self.stream("SendStreamingMessage", {"message": message}):
                yield item
        else:
            yield await self.call("SendMessage", {"message": message, "configuration": {"returnImmediately": False}})

    async def get_task(self, task_id: str) -> tuple[Any, Any]:
        return await self.call("GetTask", {"id": task_id})

    async def cancel(self, task_id: str) -> tuple[Any, Any]:
        return await self.call("CancelTask", {"id": task_id})

    def subscribe(self, task_id: str) -> AsyncIterator[tuple[Any, Any]]:
        return self.stream("SubscribeToTask", {"id": task_id})


class Rest(Binding):
    name = "HTTP+JSON/1.0"

    async def call(self, method: str, path: str, body: Any = None) -> tuple[Any, Any]:
        response = await self.http.request(method, self.url + path, json=body, headers=HEADERS)
        if response.status_code != 200:
            return None, error_of(response)
        return response.json(), None

    async def stream_at(self, method: str, path: str, body: Any) -> AsyncIterator[tuple[Any, Any]]:
        async for frame in self.sse(method, self.url + path, body):
            if isinstance(frame, tuple):
                yield None, frame[2]
            else:
                yield frame, None

    async def send(self, message: Any, stream: bool) -> AsyncIterator[tuple[Any, Any]]:
        if stream:
            async for item in self.stream_at("POST", "/message:stream", {"message": message}):
                yield item
        else:
            yield await self.call(
                "POST", "/message:send", {"message": message, "configuration": {"returnImmediately": False}}
            )

    async def get_task(self, task_id: str) -> tuple[Any, Any]:
        return await self.call("GET", f"/tasks/{task_id}")

    async def cancel(self, task_id: str) -> tuple[Any, Any]:
        return await self.call("POST", f"/tasks/{task_id}:cancel", {})

    def subscribe(self, task_id: str) -> AsyncIterator[tuple[Any, Any]]:
        return self.stream_at("POST", f"/tasks/{task_id}:subscribe", {})


# --- scenarios --------------------------------------------------------------------


async def stream(
    b: Binding, message: Any, seen: Stream | None = None, working: asyncio.Event | None = None
) -> Stream:
    seen = seen if seen is not None else Stream()
    try:
        async for result, error in b.send(message, stream=True):
            if error is not None:
                seen.error = error
                break
            seen.take(result)
            if working is not None and seen.final_state == "TASK_STATE_WORKING":
                working.set()
    finally:
        if working is not None:
            working.set()
    return seen


async def get_task(b: Binding, task_id: str) -> Any:
    task, error = await b.get_task(task_id)
    return {"error": error} if error is not None else describe_task(task)


async def cancel(b: Binding, task_id: str) -> Any:
    task, error = await b.cancel(task_id)
    return {"error": error} if error is not None else describe_task(task)


async def scenario_echo(b: Binding) -> Any:
    return (await stream(b, user_message("echo hello tap world"))).outcome()


async def scenario_echo_unary(b: Binding) -> Any:
    async for result, error in b.send(user_message("echo one two three"), stream=False):
        return {"error": error} if error is not None else describe_event(result)
    return {"error": "no answer"}


async def scenario_ask(b: Binding) -> Any:
    first = await stream(b, user_message("ask"))
    out: dict[str, Any] = {"first": first.outcome()}
    if first.task_id:
        follow = await stream(b, user_message("42", first.task_id, first.context_id))
        out["followUp"] = follow.outcome()
        out["getTask"] = await get_task(b, first.task_id)
    return out


async def scenario_fail(b: Binding) -> Any:
    return (await stream(b, user_message("fail"))).outcome()


async def scenario_long(b: Binding) -> Any:
    seen, working = Stream(), asyncio.Event()
    consumer = asyncio.create_task(stream(b, user_message("long"), seen, working))
    await working.wait()
    out: dict[str, Any] = {}
    if seen.task_id and not consumer.done():
        out["cancel"] = await cancel(b, seen.task_id)
    else:
        out["cancel"] = {"error": "the stream ended before the task was working"}
    await consumer
    out["stream"] = seen.outcome()
    if seen.task_id:
        out["getTask"] = await get_task(b, seen.task_id)
        out["cancelAgain"] = await cancel(b, seen.task_id)
    return out


async def scenario_subscribe(b: Binding) -> Any:
    seen, working = Stream(), asyncio.Event()
    consumer = asyncio.create_task(stream(b, user_message("long"), seen, working))
    await working.wait()
    out: dict[str, Any] = {}
    if not seen.task_id or consumer.done():
        await consumer
        return {"error": "the stream ended before the task was working", "stream": seen.outcome()}
    sub = Stream()
    first = asyncio.Event()

    async def follow() -> None:
        try:
            async for result, error in b.subscribe(seen.task_id):
                if error is not None:
                    sub.error = error
                    break
                sub.take(result)
                first.set()
        finally:
            first.set()

    subscriber = asyncio.create_task(follow())
    await first.wait()
    out["cancel"] = await cancel(b, seen.task_id)
    await subscriber
    await consumer
    out["subscription"] = sub.outcome()
    out["stream"] = seen.outcome()
    return out


async def scenario_direct(b: Binding) -> Any:
    return (await stream(b, user_message("direct"))).outcome()


async def scenario_errors(b: Binding) -> Any:
    out: dict[str, Any] = {"getUnknownTask": await get_task(b, UNKNOWN_TASK)}
    done = await stream(b, user_message("echo done"))
    out["cancelCompletedTask"] = await cancel(b, done.task_id) if done.task_id else {"error": "no task"}
    return out


SCENARIOS = {
    "echo": scenario_echo,
    "echo-unary": scenario_echo_unary,
    "ask": scenario_ask,
    "fail": scenario_fail,
    "long": scenario_long,
    "subscribe": scenario_subscribe,
    "direct": scenario_direct,
    "errors": scenario_errors,
}

BINDINGS = {"JSONRPC": JsonRpc, "HTTP+JSON": Rest}


def http_client(record: str | None) -> httpx.AsyncClient:
    if record is None:
        return httpx.AsyncClient(timeout=HTTP_TIMEOUT)
    return httpx.AsyncClient(timeout=HTTP_TIMEOUT, transport=RecordingTransport(record))


async def main_async(base_url: str, record: str | None) -> dict[str, Any]:
    outcomes: dict[str, Any] = {}
    async with http_client(record) as http:
        card = (await http.get(base_url.rstrip("/") + "/.well-known/agent-card.json")).json()
        for interface in card.get("supportedInterfaces", []):
            binding = BINDINGS.get(interface.get("protocolBinding"))
            if binding is None or interface.get("protocolVersion") != "1.0":
                continue
            b = binding(http, interface["url"])
            out: dict[str, Any] = {}
            for name, play in SCENARIOS.items():
                try:
                    out[name] = await asyncio.wait_for(play(b), SCENARIO_TIMEOUT)
                except asyncio.TimeoutError:
                    out[name] = {"error": "timeout"}
            outcomes[b.name] = out
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base_url")
    parser.add_argument("--record", default=None)
    args = parser.parse_args()
    try:
        outcomes = asyncio.run(main_async(args.base_url, args.record))
    except httpx.HTTPError as error:
        print(f"wire_client: {error!r}", file=sys.stderr)
        sys.exit(1)
    json.dump(outcomes, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
