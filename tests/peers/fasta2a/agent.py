"""An A2A agent on fasta2a (PyPI): its own Starlette protocol layer, driven by a Worker of ours.

Usage: agent.py --port N [--public-url URL] [--record FILE]

fasta2a's `FastA2A` app, `InMemoryBroker` and `InMemoryStorage`, with a
`Worker` that plays the scenarios of tests/peers/README.md, chosen by the
message text. fasta2a serves JSON-RPC only, at `/`; its card says 1.0, and it
answers the 1.0 method names (`SendStreamingMessage`...) with 1.0 enums. The
worker reports the way fasta2a documents (`Worker.publish_artifact`: "A chunk
is append=True and, until the last one, last_chunk=False", which is also what
its pydantic-ai bridge sends) and leaves the rest to the library: the state
kept in storage is published and the stream closed when an operation returns,
and a task whose run raises is marked failed.

  echo WORDS   working, the words as chunks of artifact `echo`, completed
  ask          input-required; fasta2a makes every message a new task, so the
               follow-up (same context) is a new task, which completes
  fail         working, a chunk of `partial` left open, then the run raises
  long         working until canceled

Prints `READY <port>` once it listens. `--record FILE` appends one JSON line
per HTTP exchange, {"method", "path", "status", "content_type", "body_b64"},
with the response body bytes as sent (as tests/peers/agent.py does; copied
here because this venv has no a2a-sdk to import that file with).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import socket
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from fasta2a import FastA2A, Worker
from fasta2a.broker import InMemoryBroker
from fasta2a.schema import Artifact, Message, Part, TaskIdParams, TaskSendParams
from fasta2a.storage import InMemoryStorage

# A context whose last task asked for input: its next message is the answer.
WAITING = "waiting for input"


def text_of(message: Message) -> str:
    return "".join(part.get("text", "") for part in message.get("parts", []))  # type: ignore[misc]


class ScenarioWorker(Worker[str]):
    async def run_task(self, params: TaskSendParams) -> None:
        task_id, context_id = params["id"], params["context_id"]
        text = text_of(params["message"])
        if await self.storage.load_context(context_id) == WAITING:
            await self.storage.update_context(context_id, "")
            await self.start(task_id, context_id)
            answer = Artifact(artifact_id=str(uuid.uuid4()), name="answer", parts=[Part(text=f"you said {text}")])
            await self.publish_artifact(task_id, context_id, answer)
            await self.storage.update_task(task_id, state="completed", new_artifacts=[answer])
        elif text == "ask":
            question = Message(role="agent", parts=[Part(text="which number?")], message_id=str(uuid.uuid4()))
            await self.storage.update_context(context_id, WAITING)
            await self.storage.update_task(task_id, state="input-required", new_messages=[question])
            await self.publish_status(task_id, context_id, "input-required", question)
        elif text == "fail":
            await self.start(task_id, context_id)
            half = Artifact(artifact_id=str(uuid.uuid4()), name="partial", parts=[Part(text="half")])
            await self.publish_artifact(task_id, context_id, half, append=True, last_chunk=False)
            raise RuntimeError("failed on purpose")
        elif text == "long":
            await self.start(task_id, context_id)  # until CancelTask
        else:
            await self.start(task_id, context_id)
            words = text.removeprefix("echo ")
            artifact_id = str(uuid.uuid4())
            pieces = [p if i == 0 else " " + p for i, p in enumerate(words.split(" "))]
            for i, piece in enumerate(pieces):
                chunk = Artifact(artifact_id=artifact_id, name="echo", parts=[Part(text=piece)])
                await self.publish_artifact(
                    task_id, context_id, chunk, append=True, last_chunk=i == len(pieces) - 1
                )
            whole = Artifact(artifact_id=artifact_id, name="echo", parts=[Part(text=words)])
            await self.storage.update_task(task_id, state="completed", new_artifacts=[whole])

    async def start(self, task_id: str, context_id: str) -> None:
        await self.storage.update_task(task_id, state="working")
        await self.publish_status(task_id, context_id, "working")

    async def cancel_task(self, params: TaskIdParams) -> None:
        task = await self.storage.load_task(params["id"])
        if task is not None and task["status"]["state"] in ("submitted", "working", "input-required"):
            await self.storage.update_task(params["id"], state="canceled")

    def build_message_history(self, history: list[Message]) -> list[Any]:
        return history

    def build_artifacts(self, result: Any) -> list[Artifact]:
        return []


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
        record: dict[str, Any] = {"method": scope["method"], "path": scope["path"], "status": None, "content_type": None}
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


def build_app(public_url: str) -> FastA2A:
    storage: InMemoryStorage[str] = InMemoryStorage()
    broker = InMemoryBroker()
    worker = ScenarioWorker(broker=broker, storage=storage)

    @asynccontextmanager
    async def lifespan(app: FastA2A) -> AsyncIterator[None]:
        async with app.task_manager, worker.run():
            yield

    return FastA2A(
        storage=storage,
        broker=broker,
        name="a2a-tap fasta2a peer",
        url=public_url,
        description="Plays the scenarios of a2a-tap's real-peer tests.",
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        lifespan=lifespan,
    )


async def serve(port: int, public_url: str | None, record: str | None) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    bound = sock.getsockname()[1]
    app: Any = build_app(public_url or f"http://127.0.0.1:{bound}")
    if record:
        app = RecordExchanges(app, record)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
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
    args = parser.parse_args()
    try:
        asyncio.run(serve(args.port, args.public_url, args.record))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
