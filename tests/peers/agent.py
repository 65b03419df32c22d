"""A real A2A agent built only from the official a2a-sdk (1.3.0) server classes.

Serves JSON-RPC at `/` and HTTP+JSON under `/rest`, each for protocol 1.0 and,
through the SDK's own compatibility layer, 0.3. The behaviour is chosen by
the first word of the user's message:

  echo ...  streamed echo: a chunked artifact (append, lastChunk) then completed
  ask       input-required; a follow-up message on the same task completes it
            with one whole artifact
  fail      one artifact chunk without lastChunk, then failed (abandoned artifact)
  long      working until canceled
  direct    a direct Message reply, no task

Usage: agent.py --port N [--public-url URL] [--record FILE] [--gzip] [--push]
Prints `READY <port>` on stdout once it accepts connections. `--port 0` picks
a free port; `--public-url` is the base URL advertised in the agent card
(default: this agent's own loopback URL), so a proxy in front can be advertised.
`--record FILE` appends one JSON line per HTTP exchange,
{"method", "path", "status", "content_type", "body_b64"}, holding the exact
response body bytes this agent sent (an ASGI middleware around `send`).
`--gzip` puts Starlette's GZipMiddleware (shipped with the SDK's server
stack) in front, as many deployments do: answers, the card too, are
gzip-compressed for callers that accept it (SSE streams are left alone).
`--push` turns push notifications on with the SDK's own parts: the card says
`capabilities.pushNotifications: true` and the handler gets the SDK's
InMemoryPushNotificationConfigStore and BasePushNotificationSender (an httpx
client, no URL screening, so loopback webhooks are accepted). Without it the
card says false and the config methods answer PushNotificationNotSupported.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import socket
import sys
from collections.abc import AsyncIterator
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.middleware.gzip import GZipMiddleware

from a2a.helpers import new_task_from_user_message, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    TaskState,
)

JSONRPC_PATH = "/"
REST_PREFIX = "/rest"

# Small pauses between events so that each one leaves the server as its own
# write, as a real agent's would; the order of events never depends on them.
CHUNK_PAUSE = 0.01
LONG_TASK_SECONDS = 60.0
# The push sender's HTTP timeout: a webhook that hangs is given up on.
PUSH_TIMEOUT = 10.0


def agent_card(public_url: str, push: bool = False) -> AgentCard:
    """The card: JSON-RPC and HTTP+JSON, each in 1.0 and 0.3, at `public_url`;
    `capabilities.pushNotifications` is `push`."""
    base = public_url.rstrip("/")
    jsonrpc_url = base + JSONRPC_PATH
    rest_url = base + REST_PREFIX
    return AgentCard(
        name="a2a-tap test peer",
        description="Echo, ask, fail, long and direct scenarios for a2a-tap tests.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=jsonrpc_url, protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=rest_url, protocol_binding="HTTP+JSON", protocol_version="1.0"),
            AgentInterface(url=jsonrpc_url, protocol_binding="JSONRPC", protocol_version="0.3"),
            AgentInterface(url=rest_url, protocol_binding="HTTP+JSON", protocol_version="0.3"),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=push),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="scenarios",
                name="scenarios",
                description="echo | ask | fail | long | direct",
                tags=["test"],
            )
        ],
    )


class ScenarioExecutor(AgentExecutor):
    """Picks a scenario from the message text and plays it on the event queue."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input().strip()
        words = text.split()
        verb = words[0].lower() if words else ""
        task = context.current_task

        if task is None and verb == "direct":
            await event_queue.enqueue_event(
                new_text_message("direct reply", context_id=context.context_id)
            )
            return

        if task is None:
            message = context.message
            if message is None:
                raise ValueError("a new task needs a user message")
            task = new_task_from_user_message(message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)

        if task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            await self._answer(updater, text)
        elif verb == "echo":
            await self._echo(updater, words[1:] or ["(nothing)"])
        elif verb == "ask":
            await updater.start_work()
            await updater.requires_input(
                updater.new_agent_message([new_text_part("what is the answer?")])
            )
        elif verb == "fail":
            await self._fail(updater)
        elif verb == "long":
            await updater.start_work()
            await asyncio.sleep(LONG_TASK_SECONDS)
            await updater.complete()
        else:
            await updater.reject(updater.new_agent_message([new_text_part("unknown scenario")]))

    async def _echo(self, updater: TaskUpdater, words: list[str]) -> None:
        await updater.start_work()
        for index, word in enumerate(words):
            await asyncio.sleep(CHUNK_PAUSE)
            await updater.add_artifact(
                [new_text_part(word if index == 0 else " " + word)],
                artifact_id="echo-1",
                name="echo",
                append=index > 0,
                last_chunk=index == len(words) - 1,
            )
        await updater.complete()

    async def _answer(self, updater: TaskUpdater, text: str) -> None:
        await updater.start_work()
        await asyncio.sleep(CHUNK_PAUSE)
        await updater.add_artifact(
            [new_text_part("you said: " + text)],
            artifact_id="answer-1",
            name="answer",
            last_chunk=True,
        )
        await updater.complete()

    async def _fail(self, updater: TaskUpdater) -> None:
        await updater.start_work()
        await asyncio.sleep(CHUNK_PAUSE)
        await updater.add_artifact(
            [new_text_part("partial")],
            artifact_id="partial-1",
            name="partial",
        )
        await asyncio.sleep(CHUNK_PAUSE)
        await updater.failed(updater.new_agent_message([new_text_part("gave up")]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        task_id = task.id if task else context.task_id
        context_id = task.context_id if task else context.context_id
        if not task_id or not context_id:
            raise ValueError("cancel without a task")
        await TaskUpdater(event_queue, task_id, context_id).cancel()


class RecordExchanges:
    """ASGI middleware: one JSON line per HTTP exchange, with the response body bytes as sent."""

    def __init__(self, app: Any, path: str) -> None:
        self.app = app
        self.path = path

    def write(self, record: dict[str, Any]) -> None:
        with open(self.path, "a", encoding="utf-8") as out:
            out.write(json.dumps(record, separators=(",", ":")) + "\n")

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        record: dict[str, Any] = {
            "method": scope["method"],
            "path": scope["path"],
            "status": None,
            "content_type": None,
        }
        body = bytearray()
        done = False

        def finish() -> None:
            nonlocal done
            if not done:
                done = True
                record["body_b64"] = base64.b64encode(bytes(body)).decode("ascii")
                self.write(record)

        async def recording_send(message: dict[str, Any]) -> None:
            await send(message)
            if message["type"] == "http.response.start":
                record["status"] = message["status"]
                for key, value in message.get("headers", []):
                    if key.lower() == b"content-type":
                        record["content_type"] = value.decode("latin-1")
            elif message["type"] == "http.response.body":
                body.extend(message.get("body", b""))
                if not message.get("more_body", False):
                    finish()

        try:
            await self.app(scope, receive, recording_send)
        finally:
            finish()  # a stream cut short is recorded with what was sent


def grpc_card(target: str) -> AgentCard:
    """The card of grpc_agent.py: the same agent, its gRPC interfaces (1.0 and
    0.3) at `target` (host:port)."""
    card = agent_card("http://" + target)
    del card.supported_interfaces[:]
    for version in ("1.0", "0.3"):
        card.supported_interfaces.append(
            AgentInterface(url=target, protocol_binding="GRPC", protocol_version=version)
        )
    return card


def build_app(public_url: str, record: str | None = None, push: bool = False) -> Any:
    """The Starlette app from the SDK's own route factories, 0.3 compatibility on,
    wrapped in `RecordExchanges` when `record` names a file; with `push`, the
    SDK's push config store and sender."""
    card = agent_card(public_url, push)
    push_client = httpx.AsyncClient(timeout=PUSH_TIMEOUT) if push else None
    push_parts: dict[str, Any] = {}
    if push_client is not None:
        store = InMemoryPushNotificationConfigStore()
        push_parts = {
            "push_config_store": store,
            "push_sender": BasePushNotificationSender(push_client, store),
        }
    handler = DefaultRequestHandler(
        agent_executor=ScenarioExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        **push_parts,
    )
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, JSONRPC_PATH, enable_v0_3_compat=True),
        *create_rest_routes(handler, enable_v0_3_compat=True, path_prefix=REST_PREFIX),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        yield
        await handler.aclose()
        if push_client is not None:
            await push_client.aclose()

    app = Starlette(routes=routes, lifespan=lifespan)
    return RecordExchanges(app, record) if record else app


async def serve(
    port: int,
    public_url: str | None,
    record: str | None = None,
    wrap: Any = None,
    push: bool = False,
) -> None:
    """Serves the app (wrapped by `wrap`, an ASGI middleware, when given) and
    prints `READY PORT` once it listens."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    bound = sock.getsockname()[1]
    app = build_app(public_url or f"http://127.0.0.1:{bound}", record, push)
    if wrap is not None:
        app = wrap(app)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    run = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if run.done():
            await run
            raise SystemExit("agent stopped before it started")
        await asyncio.sleep(0.01)
    print(f"READY {bound}", flush=True)
    await run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--public-url", default=None)
    parser.add_argument("--record", default=None, help="append one JSON line per HTTP exchange")
    parser.add_argument("--gzip", action="store_true", help="compress answers (GZipMiddleware)")
    parser.add_argument("--push", action="store_true", help="push notifications on (the SDK's store and sender)")
    args = parser.parse_args()
    wrap = (lambda app: GZipMiddleware(app, minimum_size=0)) if args.gzip else None
    try:
        asyncio.run(serve(args.port, args.public_url, args.record, wrap, args.push))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
