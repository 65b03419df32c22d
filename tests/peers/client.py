"""Drive tests/peers/agent.py with the official a2a-sdk client and print what it saw.

Usage: client.py BASE_URL [--only BINDING/VERSION] [--record FILE]

Resolves the agent card at BASE_URL and, for each interface the card offers
(JSON-RPC and HTTP+JSON, protocol 1.0 and 0.3), builds the SDK's own client
(`ClientFactory.create` on the card narrowed to that one interface, which is
how the SDK chooses a binding and version) and plays every scenario:

  echo          streamed send, chunked artifact, completed
  echo-unary    blocking (non-streaming) send of the same
  ask           streamed send to input-required, then a streamed follow-up
                on the same task, then GetTask
  fail          streamed send: artifact chunk left open, failed
  long          streamed send; CancelTask while it works; then GetTask
  direct        streamed send answered by a direct Message
  errors        GetTask of an unknown task, CancelTask of a completed task

Prints ONE JSON document (sorted keys): outcomes per "BINDING/VERSION" and
scenario, made only of event types, states, artifact texts, roles and error
classes: no ids, timestamps or ports, so that a run straight to the agent and
a run through a proxy compare equal. `--record FILE` appends one JSON line
per HTTP exchange (the card fetch too), {"method", "path", "status",
"content_type", "body_b64"}, with the response body bytes as received (an
httpx transport wrapper); the document printed is the same with or without
it. Exits 1 if the card cannot be fetched.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import re
import sys
from collections.abc import AsyncIterator
from typing import Any

import grpc
import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.client import Client
from a2a.helpers import new_text_message
from a2a.types.a2a_pb2 import (
    AgentCard,
    CancelTaskRequest,
    GetTaskRequest,
    Role,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
)

from agent import grpc_card

# Every wait is bounded: a scenario that hangs is reported, not waited for.
SCENARIO_TIMEOUT = 20.0
HTTP_TIMEOUT = 15.0

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_URL = re.compile(r"https?://[^\s'\"]+")


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


def http_client(record: str | None) -> httpx.AsyncClient:
    """An httpx client; with `record`, every response it receives is recorded there."""
    if record is None:
        return httpx.AsyncClient(timeout=HTTP_TIMEOUT)
    return httpx.AsyncClient(timeout=HTTP_TIMEOUT, transport=RecordingTransport(record))


# --- outcomes --------------------------------------------------------------


def state_name(state: int) -> str:
    return TaskState.Name(state)


def parts_text(parts: Any) -> str:
    return "".join(part.text for part in parts if part.HasField("text"))


def describe_event(event: StreamResponse) -> dict[str, Any]:
    """One stream event, without ids or timestamps."""
    if event.HasField("task"):
        task = event.task
        return {
            "type": "task",
            "state": state_name(task.status.state),
            "artifacts": [parts_text(a.parts) for a in task.artifacts],
        }
    if event.HasField("status_update"):
        status = event.status_update.status
        out: dict[str, Any] = {"type": "statusUpdate", "state": state_name(status.state)}
        if status.HasField("message"):
            out["message"] = parts_text(status.message.parts)
        return out
    if event.HasField("artifact_update"):
        update = event.artifact_update
        return {
            "type": "artifactUpdate",
            "artifact": update.artifact.name,
            "text": parts_text(update.artifact.parts),
            "append": update.append,
            "lastChunk": update.last_chunk,
        }
    if event.HasField("message"):
        message = event.message
        return {
            "type": "message",
            "role": Role.Name(message.role),
            "text": parts_text(message.parts),
            "hasTaskId": bool(message.task_id),
        }
    return {"type": "empty"}


def describe_task(task: Task) -> dict[str, Any]:
    return {
        "state": state_name(task.status.state),
        "artifacts": {a.name: parts_text(a.parts) for a in task.artifacts},
        "historyRoles": [Role.Name(m.role) for m in task.history],
    }


def describe_error(error: BaseException) -> dict[str, Any]:
    message = str(getattr(error, "message", "") or error)
    message = _URL.sub("<url>", _UUID.sub("<id>", message))
    return {"error": type(error).__name__, "message": message}


class Stream:
    """What one streamed call yielded, summarised; keeps the task's ids aside."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.task_id = ""
        self.context_id = ""
        self.artifacts: dict[str, str] = {}
        self.final_state: str | None = None
        self.error: dict[str, Any] | None = None

    def take(self, event: StreamResponse) -> None:
        self.events.append(describe_event(event))
        if event.HasField("task"):
            self.task_id, self.context_id = event.task.id, event.task.context_id
            self.final_state = state_name(event.task.status.state)
        elif event.HasField("status_update"):
            self.task_id = self.task_id or event.status_update.task_id
            self.context_id = self.context_id or event.status_update.context_id
            self.final_state = state_name(event.status_update.status.state)
        elif event.HasField("artifact_update"):
            update = event.artifact_update
            name = update.artifact.name
            text = parts_text(update.artifact.parts)
            self.artifacts[name] = (self.artifacts.get(name, "") + text) if update.append else text

    def outcome(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "events": self.events,
            "finalState": self.final_state,
            "artifacts": self.artifacts,
        }
        if self.error is not None:
            out["error"] = self.error
        return out


def user_message(text: str, task_id: str = "", context_id: str = "") -> SendMessageRequest:
    message = new_text_message(text, context_id=context_id or None, task_id=task_id or None, role=Role.ROLE_USER)
    return SendMessageRequest(message=message)


async def stream(
    client: Client,
    request: SendMessageRequest,
    seen: Stream | None = None,
    working: asyncio.Event | None = None,
) -> Stream:
    """Play one streamed call into `seen`; set `working` once the task works."""
    seen = seen if seen is not None else Stream()
    try:
        async for event in client.send_message(request):
            seen.take(event)
            if working is not None and seen.final_state == "TASK_STATE_WORKING":
                working.set()
    except Exception as error:  # noqa: BLE001 - every failure is an outcome
        seen.error = describe_error(error)
    finally:
        if working is not None:
            working.set()
    return seen


async def scenario_echo(client: Client, _unary: Client) -> dict[str, Any]:
    return (await stream(client, user_message("echo hello tap world"))).outcome()


async def scenario_echo_unary(_client: Client, unary: Client) -> dict[str, Any]:
    return (await stream(unary, user_message("echo one two three"))).outcome()


async def scenario_ask(client: Client, _unary: Client) -> dict[str, Any]:
    first = await stream(client, user_message("ask"))
    out: dict[str, Any] = {"first": first.outcome()}
    if not first.task_id:
        return out
    follow = await stream(client, user_message("42", first.task_id, first.context_id))
    out["followUp"] = follow.outcome()
    try:
        out["getTask"] = describe_task(await client.get_task(GetTaskRequest(id=first.task_id)))
    except Exception as error:  # noqa: BLE001
        out["getTask"] = describe_error(error)
    return out


async def scenario_fail(client: Client, _unary: Client) -> dict[str, Any]:
    return (await stream(client, user_message("fail"))).outcome()


async def scenario_long(client: Client, _unary: Client) -> dict[str, Any]:
    seen = Stream()
    working = asyncio.Event()
    consumer = asyncio.create_task(stream(client, user_message("long"), seen, working))
    await working.wait()
    out: dict[str, Any] = {}
    if seen.task_id and not consumer.done():
        try:
            out["cancel"] = describe_task(await client.cancel_task(CancelTaskRequest(id=seen.task_id)))
        except Exception as error:  # noqa: BLE001
            out["cancel"] = describe_error(error)
    else:
        out["cancel"] = {"error": "the stream ended before the task was working"}
    await consumer
    out["stream"] = seen.outcome()
    if seen.task_id:
        try:
            out["getTask"] = describe_task(await client.get_task(GetTaskRequest(id=seen.task_id)))
        except Exception as error:  # noqa: BLE001
            out["getTask"] = describe_error(error)
    return out


async def scenario_direct(client: Client, _unary: Client) -> dict[str, Any]:
    return (await stream(client, user_message("direct"))).outcome()


async def scenario_errors(client: Client, unary: Client) -> dict[str, Any]:
    out: dict[str, Any] = {}
    try:
        await client.get_task(GetTaskRequest(id="00000000-0000-4000-8000-000000000000"))
        out["getUnknownTask"] = {"error": None}
    except Exception as error:  # noqa: BLE001
        out["getUnknownTask"] = describe_error(error)
    done = await stream(unary, user_message("echo done"))
    try:
        await client.cancel_task(CancelTaskRequest(id=done.task_id))
        out["cancelCompletedTask"] = {"error": None}
    except Exception as error:  # noqa: BLE001
        out["cancelCompletedTask"] = describe_error(error)
    return out


SCENARIOS = {
    "echo": scenario_echo,
    "echo-unary": scenario_echo_unary,
    "ask": scenario_ask,
    "fail": scenario_fail,
    "long": scenario_long,
    "direct": scenario_direct,
    "errors": scenario_errors,
}


def narrowed(card: AgentCard, binding: str, version: str) -> AgentCard | None:
    """The card with only the interface for (binding, version), or None."""
    chosen = [
        i for i in card.supported_interfaces if i.protocol_binding == binding and i.protocol_version == version
    ]
    if not chosen:
        return None
    one = AgentCard()
    one.CopyFrom(card)
    del one.supported_interfaces[:]
    one.supported_interfaces.append(chosen[0])
    return one


def relative(url: str, base: str) -> str:
    base = base.rstrip("/")
    return url[len(base):] or "/" if url.startswith(base) else url


async def run_interface(
    base_url: str, card: AgentCard, binding: str, version: str, record: str | None = None
) -> dict[str, Any]:
    one = narrowed(card, binding, version)
    if one is None:
        return {"error": "not offered by the card"}
    out: dict[str, Any] = {"endpoint": relative(one.supported_interfaces[0].url, base_url)}
    grpc_channel = grpc.aio.insecure_channel if binding == "GRPC" else None
    async with http_client(record) as http_streaming, http_client(record) as http_unary:
        streaming = ClientFactory(
            ClientConfig(
                streaming=True,
                httpx_client=http_streaming,
                supported_protocol_bindings=[binding],
                grpc_channel_factory=grpc_channel,
            )
        ).create(one)
        unary = ClientFactory(
            ClientConfig(
                streaming=False,
                httpx_client=http_unary,
                supported_protocol_bindings=[binding],
                grpc_channel_factory=grpc_channel,
            )
        ).create(one)
        for name, play in SCENARIOS.items():
            try:
                out[name] = await asyncio.wait_for(play(streaming, unary), SCENARIO_TIMEOUT)
            except asyncio.TimeoutError:
                out[name] = {"error": "timeout"}
    return out


INTERFACES = [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("JSONRPC", "0.3"), ("HTTP+JSON", "0.3")]


GRPC_INTERFACES = [("GRPC", "1.0"), ("GRPC", "0.3")]


async def main_async(
    base_url: str, only: str | None, record: str | None = None, grpc_target: str | None = None
) -> dict[str, Any]:
    if grpc_target is not None:
        # grpc_agent.py serves no HTTP card: its card, at the target given.
        card, interfaces, base_url = grpc_card(grpc_target), GRPC_INTERFACES, grpc_target
    else:
        async with http_client(record) as http:
            card = await A2ACardResolver(http, base_url).get_agent_card()
        interfaces = INTERFACES
    outcomes: dict[str, Any] = {}
    for binding, version in interfaces:
        key = f"{binding}/{version}"
        if only is None or only == key:
            outcomes[key] = await run_interface(base_url, card, binding, version, record)
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base_url")
    parser.add_argument("--only", default=None, help='one of "JSONRPC/1.0", "HTTP+JSON/0.3", ...')
    parser.add_argument("--record", default=None, help="append one JSON line per HTTP exchange")
    parser.add_argument(
        "--grpc", action="store_true", help="BASE_URL is grpc_agent.py's host:port: play its gRPC interfaces"
    )
    args = parser.parse_args()
    try:
        target = args.base_url if args.grpc else None
        outcomes = asyncio.run(main_async(args.base_url, args.only, args.record, target))
    except Exception as error:  # noqa: BLE001
        print(f"client: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)
    json.dump(outcomes, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
