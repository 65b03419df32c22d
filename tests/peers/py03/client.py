"""Drive an A2A 0.3 agent with the official a2a-sdk 0.3.26 client and print what it saw.

Usage: client.py BASE_URL [--record FILE]

Resolves the agent card at BASE_URL (`A2ACardResolver`) and, for each
transport the 0.3 card offers (`preferredTransport` + `additionalInterfaces`:
JSON-RPC and HTTP+JSON), builds the SDK's own client (`ClientFactory` with
`ClientConfig.supported_transports` = that one transport, which is how the
0.3 SDK picks a binding from a card) and plays every scenario:

  echo          streamed send, chunked artifact, completed
  echo-unary    blocking (non-streaming) send of the same
  ask           streamed send to input-required, then a streamed follow-up
                on the same task, then tasks/get
  fail          streamed send: artifact chunk left open, failed
  long          streamed send; while it works tasks/resubscribe to it, then
                tasks/cancel, then tasks/get (canceled); both streams get
                AFTER_CANCEL_WAIT seconds to end by themselves, then are cut
  direct        streamed send answered by a direct Message
  finished      on a completed task: tasks/get, tasks/cancel (TaskNotCancelable
                -32002 expected), tasks/resubscribe (whatever happens)
  errors        tasks/get of an unknown task (TaskNotFound)

Prints ONE JSON document (sorted keys): outcomes per "BINDING/VERSION" (e.g.
"JSONRPC/0.3", "HTTP+JSON/0.3") and scenario, made only of event kinds,
states, artifact texts, roles and error classes/codes: no ids, timestamps or
ports, so that a run straight to the agent and a run through a proxy compare
equal. `--record FILE` appends one JSON line per HTTP exchange,
{"method", "path", "status", "content_type", "body_b64"}, with the response
body bytes as received (an httpx transport wrapper). Every wait is bounded.
Exits 1 if the card cannot be fetched.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import re
import sys
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx

from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientHTTPError, A2AClientJSONRPCError
from a2a.types import (
    AgentCard,
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskIdParams,
    TaskQueryParams,
    TaskStatusUpdateEvent,
    TextPart,
    TransportProtocol,
)

# Every wait is bounded: a scenario that hangs is reported, not waited for.
SCENARIO_TIMEOUT = 20.0
HTTP_TIMEOUT = 15.0
# After the resubscribe response has started, time for the server to attach
# the subscriber to the task's queue before the task is canceled.
ATTACH_PAUSE = 0.3
# How long the streams of a canceled task may take to end by themselves
# before the client cuts them. a2a-sdk 0.3.26 never ends them: its
# DefaultRequestHandler.on_cancel_task hands the executor a fresh tap of the
# task's queue, so the canceled status reaches only the tasks/cancel call, and
# the message/stream and tasks/resubscribe streams stay open (pings only).
AFTER_CANCEL_WAIT = 2.0

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_URL = re.compile(r"https?://[^\s'\"]+")

TRANSPORTS = [TransportProtocol.jsonrpc.value, TransportProtocol.http_json.value]


# --- recording -------------------------------------------------------------


class _RecordedStream(httpx.AsyncByteStream):
    """Passes a response body through and records its bytes when it is closed."""

    def __init__(self, inner: httpx.AsyncByteStream, record: dict[str, Any], path: str) -> None:
        self.inner = inner
        self.record = record
        self.path = path
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
    """httpx transport wrapper: one JSON line per exchange, response bytes as received."""

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


class SubscribeSignal:
    """An httpx response hook that tells when a resubscribe response has started."""

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def __call__(self, response: httpx.Response) -> None:
        request = response.request
        if request.url.path.endswith(":subscribe") or b'"tasks/resubscribe"' in (request.content or b""):
            self.started.set()


def http_client(record: str | None, hooks: list[Any] | None = None) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        timeout=HTTP_TIMEOUT,
        transport=RecordingTransport(record) if record else None,
        event_hooks={"response": hooks or []},
    )


# --- outcomes --------------------------------------------------------------


def parts_text(parts: list[Part] | None) -> str:
    return "".join(part.root.text for part in parts or [] if isinstance(part.root, TextPart))


def describe_task(task: Task) -> dict[str, Any]:
    return {
        "state": task.status.state.value,
        "artifacts": {a.name or "": parts_text(a.parts) for a in task.artifacts or []},
        "historyRoles": [m.role.value for m in task.history or []],
    }


def describe_error(error: BaseException) -> dict[str, Any]:
    out: dict[str, Any] = {"error": type(error).__name__}
    if isinstance(error, A2AClientJSONRPCError):
        out["code"] = error.error.code
        message = error.error.message or ""
    elif isinstance(error, A2AClientHTTPError):
        out["status"] = error.status_code
        message = error.message
    else:
        message = str(getattr(error, "message", "") or error)
    out["message"] = _URL.sub("<url>", _UUID.sub("<id>", message))
    return out


class Stream:
    """What one streamed call yielded, summarised; keeps the task's ids aside."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.task_id = ""
        self.context_id = ""
        self.artifacts: dict[str, str] = {}
        self.final_state: str | None = None
        self.error: dict[str, Any] | None = None
        self.cut = False

    def take(self, event: tuple[Task, Any] | Message) -> None:
        if isinstance(event, Message):
            self.events.append(
                {
                    "type": "message",
                    "role": event.role.value,
                    "text": parts_text(event.parts),
                    "hasTaskId": bool(event.task_id),
                }
            )
            return
        task, update = event
        self.task_id = self.task_id or task.id
        self.context_id = self.context_id or task.context_id
        if update is None:  # the event was a Task
            self.events.append(
                {
                    "type": "task",
                    "state": task.status.state.value,
                    "artifacts": [parts_text(a.parts) for a in task.artifacts or []],
                }
            )
            self.final_state = task.status.state.value
        elif isinstance(update, TaskStatusUpdateEvent):
            out: dict[str, Any] = {
                "type": "statusUpdate",
                "state": update.status.state.value,
                "final": update.final,
            }
            if update.status.message is not None:
                out["message"] = parts_text(update.status.message.parts)
            self.events.append(out)
            self.final_state = update.status.state.value
        elif isinstance(update, TaskArtifactUpdateEvent):
            name = update.artifact.name or ""
            text = parts_text(update.artifact.parts)
            self.events.append(
                {
                    "type": "artifactUpdate",
                    "artifact": name,
                    "text": text,
                    "append": update.append,
                    "lastChunk": update.last_chunk,
                }
            )
            self.artifacts[name] = (self.artifacts.get(name, "") + text) if update.append else text
        else:
            self.events.append({"type": type(update).__name__})

    def outcome(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "events": self.events,
            "finalState": self.final_state,
            "artifacts": self.artifacts,
        }
        if self.error is not None:
            out["error"] = self.error
        if self.cut:
            out["cutByClient"] = f"still open {AFTER_CANCEL_WAIT:g}s after tasks/cancel"
        return out


def user_message(text: str, task_id: str = "", context_id: str = "") -> Message:
    return Message(
        role=Role.user,
        message_id=str(uuid.uuid4()),
        parts=[Part(root=TextPart(text=text))],
        task_id=task_id or None,
        context_id=context_id or None,
    )


async def consume(
    events: Any,
    seen: Stream | None = None,
    working: asyncio.Event | None = None,
) -> Stream:
    """Play one streamed call into `seen`; set `working` once the task works.

    The stream is closed on the way out, also when the task running this is
    canceled (the stream is then cut by the client)."""
    seen = seen if seen is not None else Stream()
    try:
        async for event in events:
            seen.take(event)
            if working is not None and seen.final_state == "working":
                working.set()
    except Exception as error:  # noqa: BLE001 - every failure is an outcome
        seen.error = describe_error(error)
    finally:
        if working is not None:
            working.set()
        await events.aclose()
    return seen


async def settle(streams: list[tuple[asyncio.Task, Stream]], timeout: float) -> None:
    """Wait up to `timeout` for the streams to end by themselves; cut the others."""
    pending = [task for task, _ in streams if not task.done()]
    if pending:
        await asyncio.wait(pending, timeout=timeout)
    for task, seen in streams:
        if not task.done():
            seen.cut = True
            task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass


async def send(client: Client, text: str, task_id: str = "", context_id: str = "") -> Stream:
    return await consume(client.send_message(user_message(text, task_id, context_id)))


async def outcome_of(call: Any) -> dict[str, Any]:
    """The result of a tasks/get or tasks/cancel call, or its error."""
    try:
        return describe_task(await call)
    except Exception as error:  # noqa: BLE001
        return describe_error(error)


# --- scenarios -------------------------------------------------------------


class Peers:
    """The two SDK clients of one interface, and the resubscribe signal of the streaming one."""

    def __init__(self, streaming: Client, unary: Client, subscribed: SubscribeSignal) -> None:
        self.streaming = streaming
        self.unary = unary
        self.subscribed = subscribed


async def scenario_echo(p: Peers) -> dict[str, Any]:
    return (await send(p.streaming, "echo hello tap world")).outcome()


async def scenario_echo_unary(p: Peers) -> dict[str, Any]:
    return (await send(p.unary, "echo one two three")).outcome()


async def scenario_ask(p: Peers) -> dict[str, Any]:
    first = await send(p.streaming, "ask")
    out: dict[str, Any] = {"first": first.outcome()}
    if not first.task_id:
        return out
    follow = await send(p.streaming, "42", first.task_id, first.context_id)
    out["followUp"] = follow.outcome()
    out["getTask"] = await outcome_of(p.streaming.get_task(TaskQueryParams(id=first.task_id)))
    return out


async def scenario_fail(p: Peers) -> dict[str, Any]:
    return (await send(p.streaming, "fail")).outcome()


async def scenario_long(p: Peers) -> dict[str, Any]:
    seen = Stream()
    working = asyncio.Event()
    consumer = asyncio.create_task(
        consume(p.streaming.send_message(user_message("long")), seen, working)
    )
    await working.wait()
    out: dict[str, Any] = {}
    if not seen.task_id or consumer.done():
        out["cancel"] = {"error": "the stream ended before the task was working"}
        await consumer
        out["stream"] = seen.outcome()
        return out
    p.subscribed.started.clear()
    again = Stream()
    resubscriber = asyncio.create_task(
        consume(p.streaming.resubscribe(TaskIdParams(id=seen.task_id)), again)
    )
    try:
        await asyncio.wait_for(p.subscribed.started.wait(), HTTP_TIMEOUT)
    except asyncio.TimeoutError:
        out["resubscribeStarted"] = False
    await asyncio.sleep(ATTACH_PAUSE)
    out["cancel"] = await outcome_of(p.streaming.cancel_task(TaskIdParams(id=seen.task_id)))
    await settle([(consumer, seen), (resubscriber, again)], AFTER_CANCEL_WAIT)
    out["stream"] = seen.outcome()
    out["resubscribe"] = again.outcome()
    out["getTask"] = await outcome_of(p.streaming.get_task(TaskQueryParams(id=seen.task_id)))
    return out


async def scenario_direct(p: Peers) -> dict[str, Any]:
    return (await send(p.streaming, "direct")).outcome()


async def scenario_finished(p: Peers) -> dict[str, Any]:
    done = await send(p.unary, "echo done")
    out: dict[str, Any] = {"send": {"finalState": done.final_state}}
    if not done.task_id:
        return out
    out["getTask"] = await outcome_of(p.streaming.get_task(TaskQueryParams(id=done.task_id)))
    out["cancel"] = await outcome_of(p.streaming.cancel_task(TaskIdParams(id=done.task_id)))
    out["resubscribe"] = (
        await consume(p.streaming.resubscribe(TaskIdParams(id=done.task_id)))
    ).outcome()
    return out


async def scenario_errors(p: Peers) -> dict[str, Any]:
    unknown = TaskQueryParams(id="00000000-0000-4000-8000-000000000000")
    return {"getUnknownTask": await outcome_of(p.streaming.get_task(unknown))}


SCENARIOS = {
    "echo": scenario_echo,
    "echo-unary": scenario_echo_unary,
    "ask": scenario_ask,
    "fail": scenario_fail,
    "long": scenario_long,
    "direct": scenario_direct,
    "finished": scenario_finished,
    "errors": scenario_errors,
}


# --- interfaces ------------------------------------------------------------


def offered(card: AgentCard) -> dict[str, str]:
    """Transport -> URL, in the server's order of preference, as ClientFactory reads the card."""
    found = {card.preferred_transport or TransportProtocol.jsonrpc.value: card.url}
    for interface in card.additional_interfaces or []:
        found.setdefault(interface.transport, interface.url)
    return found


def relative(url: str, base: str) -> str:
    base = base.rstrip("/")
    return (url[len(base):] or "/") if url.startswith(base) else url


async def run_interface(
    base_url: str, card: AgentCard, transport: str, url: str, record: str | None
) -> dict[str, Any]:
    out: dict[str, Any] = {"endpoint": relative(url, base_url)}
    subscribed = SubscribeSignal()
    async with http_client(record, [subscribed]) as http_streaming, http_client(record) as http_unary:
        streaming = ClientFactory(
            ClientConfig(streaming=True, httpx_client=http_streaming, supported_transports=[transport])
        ).create(card)
        unary = ClientFactory(
            ClientConfig(streaming=False, httpx_client=http_unary, supported_transports=[transport])
        ).create(card)
        peers = Peers(streaming, unary, subscribed)
        for name, play in SCENARIOS.items():
            try:
                out[name] = await asyncio.wait_for(play(peers), SCENARIO_TIMEOUT)
            except asyncio.TimeoutError:
                out[name] = {"error": "timeout"}
    return out


def version_key(card: AgentCard) -> str:
    return ".".join((card.protocol_version or "?").split(".")[:2])


async def main_async(base_url: str, record: str | None) -> dict[str, Any]:
    async with http_client(record) as http:
        card = await asyncio.wait_for(A2ACardResolver(http, base_url).get_agent_card(), HTTP_TIMEOUT)
    interfaces = offered(card)
    outcomes: dict[str, Any] = {}
    for transport in TRANSPORTS:
        key = f"{transport}/{version_key(card)}"
        if transport not in interfaces:
            outcomes[key] = {"error": "not offered by the card"}
            continue
        outcomes[key] = await run_interface(base_url, card, transport, interfaces[transport], record)
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base_url")
    parser.add_argument("--record", default=None, help="append one JSON line per HTTP exchange")
    args = parser.parse_args()
    try:
        outcomes = asyncio.run(main_async(args.base_url, args.record))
    except Exception as error:  # noqa: BLE001
        print(f"client: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)
    json.dump(outcomes, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
