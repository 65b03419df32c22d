"""The official Python SDK, traced with OpenTelemetry, and an OTLP receiver.

Usage:
  traced.py receiver OUT_JSONL          an OTLP/HTTP receiver: prints "READY PORT",
                                        then appends one JSON line per span it gets
  traced.py agent PORT PUBLIC_URL OTLP  tests/peers/agent.py, its spans to OTLP
  traced.py client BASE_URL OTLP        one streamed send (JSON-RPC, 1.0) under a
                                        client span; prints {"trace_id": ...}

The receiver decodes with the official `opentelemetry-proto` package, so what
a2a-tap exports is read by the reference decoder, not by a2a-tap's own code.
The SDK traces its own client transports and request handler (a2a-sdk's
telemetry, on when OpenTelemetry is installed); it does not carry the W3C
context over HTTP by itself, so the client injects `traceparent` (an httpx
event hook) and the agent extracts it (an ASGI middleware), as an
instrumented deployment does.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry import context, propagate, trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor


def any_value(v):  # noqa: ANN001, ANN201
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


def receiver(out: str) -> None:
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            lines = []
            for rs in request.resource_spans:
                service = next(
                    (any_value(a.value) for a in rs.resource.attributes if a.key == "service.name"), None
                )
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        lines.append({
                            "service": service,
                            "name": s.name,
                            "kind": s.kind,
                            "trace_id": s.trace_id.hex(),
                            "span_id": s.span_id.hex(),
                            "parent_span_id": s.parent_span_id.hex(),
                            "attributes": {a.key: any_value(a.value) for a in s.attributes},
                            "events": [
                                {"name": e.name, "attributes": {a.key: any_value(a.value) for a in e.attributes}}
                                for e in s.events
                            ],
                            "status_code": s.status.code,
                        })
            with lock, open(out, "a", encoding="utf-8") as f:
                for line in lines:
                    f.write(json.dumps(line, sort_keys=True) + "\n")
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *_args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"READY {server.server_address[1]}", flush=True)
    server.serve_forever()


def provider(service: str, otlp: str) -> TracerProvider:
    p = TracerProvider(resource=Resource.create({"service.name": service}))
    p.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{otlp}/v1/traces")))
    trace.set_tracer_provider(p)
    return p


class Extract:
    """Makes each request's spans children of its `traceparent`."""

    def __init__(self, app):  # noqa: ANN001
        self.app = app

    async def __call__(self, scope, receive, send):  # noqa: ANN001
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        carrier = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        token = context.attach(propagate.extract(carrier))
        try:
            with trace.get_tracer("peer-agent").start_as_current_span(
                f"{scope['method']} {scope['path']}", kind=trace.SpanKind.SERVER
            ):
                return await self.app(scope, receive, send)
        finally:
            context.detach(token)


def agent(port: int, public_url: str, otlp: str) -> None:
    import agent as peer  # tests/peers/agent.py

    provider("peer-agent", otlp)
    asyncio.run(peer.serve(port, public_url, wrap=Extract))


async def client_async(base_url: str) -> dict:
    import httpx
    from a2a.client import A2ACardResolver, ClientConfig, ClientFactory

    import client as peer  # tests/peers/client.py

    async def inject(request: httpx.Request) -> None:
        carrier: dict[str, str] = {}
        propagate.inject(carrier)
        request.headers.update(carrier)

    tracer = trace.get_tracer("peer-client")
    with tracer.start_as_current_span("client: streamed send") as span:
        async with httpx.AsyncClient(timeout=30, event_hooks={"request": [inject]}) as http:
            card = await A2ACardResolver(http, base_url).get_agent_card()
            one = peer.narrowed(card, "JSONRPC", "1.0")
            c = ClientFactory(
                ClientConfig(streaming=True, httpx_client=http, supported_protocol_bindings=["JSONRPC"])
            ).create(one)
            seen = await peer.stream(c, peer.user_message("echo hello tap world"))
        return {"trace_id": format(span.get_span_context().trace_id, "032x"), "outcome": seen.outcome()}


def client(base_url: str, otlp: str) -> None:
    p = provider("peer-client", otlp)
    out = asyncio.run(client_async(base_url))
    p.force_flush()
    json.dump(out, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    mode, *args = sys.argv[1:]
    if mode == "receiver":
        receiver(args[0])
    elif mode == "agent":
        agent(int(args[0]), args[1], args[2])
    elif mode == "client":
        client(args[0], args[1])
    else:
        sys.exit(f"unknown mode {mode}")
