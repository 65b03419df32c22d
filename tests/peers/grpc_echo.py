"""A real gRPC server and client (grpcio, the C-core library the official SDKs use)
for a2a-tap's forwarding tests: raw-bytes methods, no schema needed.

  grpc_echo.py serve [--port N]   prints `READY <port>`, serves until killed
  grpc_echo.py call ADDR          plays every call against ADDR (host:port) and
                                  prints one JSON document of what came back

Methods of service `test.Echo`:
  Unary         unary: initial metadata, the request echoed, trailing metadata
                (text and binary)
  Stream        server streaming: five messages, one of them 100 KB (it spans
                many HTTP/2 DATA frames), then trailing metadata
  Headers       unary: the request metadata the server received, as JSON
  Fail          unary error: INVALID_ARGUMENT with a google.rpc.Status in
                `grpc-status-details-bin`, after initial metadata
  StreamFail    server streaming: one message, then ABORTED with details
  TrailersOnly  NOT_FOUND at once: a trailers-only answer (one HEADERS frame)

The document holds, per call: the status code and message, the initial and
trailing metadata (every key, in order), and the messages (length and
SHA-256), so two runs through different paths can be compared for equality.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from concurrent import futures

import grpc
from google.rpc import code_pb2, error_details_pb2, status_pb2

SERVICE = "test.Echo"
BIG = bytes(range(256)) * 400  # 102,400 bytes
TIMEOUT = 10.0


def details(code: int, message: str, reason: str) -> bytes:
    """A google.rpc.Status with one ErrorInfo, as `grpc-status-details-bin` carries it."""
    info = error_details_pb2.ErrorInfo(reason=reason, domain="a2a-tap.test")
    status = status_pb2.Status(code=code, message=message)
    status.details.add().Pack(info)
    return status.SerializeToString()


# === the server ===


def unary(request: bytes, context: grpc.ServicerContext) -> bytes:
    context.send_initial_metadata((("x-init", "one"), ("x-init-bin", b"\x00\x01\xff")))
    context.set_trailing_metadata((("x-trail", "two"), ("x-trail-bin", b"\xfe\x00")))
    return b"echo:" + request


def stream(request: bytes, context: grpc.ServicerContext):
    context.send_initial_metadata((("x-stream", "yes"),))
    for i in range(5):
        yield BIG if i == 2 else f"{i}:".encode() + request
    context.set_trailing_metadata((("x-count", "5"),))


def headers(_request: bytes, context: grpc.ServicerContext) -> bytes:
    seen = [[k, v if isinstance(v, str) else v.hex()] for k, v in context.invocation_metadata()]
    return json.dumps(seen, sort_keys=True).encode()


def fail(_request: bytes, context: grpc.ServicerContext) -> bytes:
    context.send_initial_metadata((("x-init", "before-error"),))
    context.set_trailing_metadata(
        (("grpc-status-details-bin", details(code_pb2.INVALID_ARGUMENT, "bad input", "BAD_INPUT")),)
    )
    context.abort(grpc.StatusCode.INVALID_ARGUMENT, "bad input")


def stream_fail(request: bytes, context: grpc.ServicerContext):
    yield b"first:" + request
    context.set_trailing_metadata(
        (("grpc-status-details-bin", details(code_pb2.ABORTED, "gave up", "GAVE_UP")),)
    )
    context.abort(grpc.StatusCode.ABORTED, "gave up")


def trailers_only(_request: bytes, context: grpc.ServicerContext) -> bytes:
    context.abort(grpc.StatusCode.NOT_FOUND, "no such thing")


def serve(port: int) -> None:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    handlers = {
        "Unary": grpc.unary_unary_rpc_method_handler(unary),
        "Stream": grpc.unary_stream_rpc_method_handler(stream),
        "Headers": grpc.unary_unary_rpc_method_handler(headers),
        "Fail": grpc.unary_unary_rpc_method_handler(fail),
        "StreamFail": grpc.unary_stream_rpc_method_handler(stream_fail),
        "TrailersOnly": grpc.unary_unary_rpc_method_handler(trailers_only),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    if bound == 0:
        raise SystemExit(f"cannot bind 127.0.0.1:{port}")
    server.start()
    print(f"READY {bound}", flush=True)
    server.wait_for_termination()


# === the client ===


def metadata(pairs) -> list[list[str]]:
    out = []
    for key, value in pairs or ():
        out.append([key, value.hex() if isinstance(value, bytes) else value])
    return out


def message(data: bytes) -> dict[str, object]:
    return {"len": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def outcome(call, messages: list[bytes], error: grpc.RpcError | None) -> dict[str, object]:
    source = error if error is not None else call
    return {
        "code": source.code().name,
        "details": source.details(),
        "initial": metadata(source.initial_metadata()),
        "trailing": metadata(source.trailing_metadata()),
        "messages": [message(m) for m in messages],
    }


def unary_call(channel: grpc.Channel, method: str, request: bytes, **kw) -> dict[str, object]:
    stub = channel.unary_unary(f"/{SERVICE}/{method}")
    try:
        response, call = stub.with_call(request, timeout=TIMEOUT, **kw)
        result = outcome(call, [response], None)
        if method == "Headers":
            result["received"] = json.loads(response)
        return result
    except grpc.RpcError as e:
        return outcome(None, [], e)


def stream_call(channel: grpc.Channel, method: str, request: bytes, **kw) -> dict[str, object]:
    call = channel.unary_stream(f"/{SERVICE}/{method}")(request, timeout=TIMEOUT, **kw)
    got: list[bytes] = []
    try:
        for m in call:
            got.append(m)
        return outcome(call, got, None)
    except grpc.RpcError as e:
        return outcome(None, got, e)


def call(addr: str) -> dict[str, object]:
    md = (("x-caller", "tap-test"), ("x-caller-bin", b"\x01\x02"))
    with grpc.insecure_channel(addr) as channel:
        grpc.channel_ready_future(channel).result(timeout=TIMEOUT)
        return {
            "unary": unary_call(channel, "Unary", b"hello", metadata=md),
            "unary_gzip": unary_call(
                channel, "Unary", b"z" * 4096, compression=grpc.Compression.Gzip
            ),
            "stream": stream_call(channel, "Stream", b"s", metadata=md),
            "headers": unary_call(channel, "Headers", b"", metadata=md),
            "fail": unary_call(channel, "Fail", b"x"),
            "stream_fail": stream_call(channel, "StreamFail", b"y"),
            "trailers_only": unary_call(channel, "TrailersOnly", b""),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--port", type=int, default=0)
    c = sub.add_parser("call")
    c.add_argument("addr")
    args = parser.parse_args()
    if args.command == "serve":
        serve(args.port)
    else:
        json.dump(call(args.addr), sys.stdout, indent=1, sort_keys=True)
        print()


if __name__ == "__main__":
    main()
