"""The agent of agent.py over the gRPC binding, from the official a2a-sdk (1.3.0)
classes only: `GrpcHandler` (service lf.a2a.v1.A2AService, protocol 1.0) and,
through the SDK's compatibility layer, `CompatGrpcHandler` (a2a.v1.A2AService,
0.3), both on one grpc.aio server in front of the same executor and task store.

Usage: grpc_agent.py --port N
Prints `READY <port>` once it accepts calls (`--port 0` picks a free port).
"""

from __future__ import annotations

import argparse
import asyncio
import sys

import grpc

from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc
from a2a.compat.v0_3.grpc_handler import CompatGrpcHandler
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.grpc_handler import GrpcHandler
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import a2a_pb2_grpc

from agent import ScenarioExecutor, grpc_card


async def serve(port: int) -> None:
    server = grpc.aio.server()
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    handler = DefaultRequestHandler(
        agent_executor=ScenarioExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=grpc_card(f"127.0.0.1:{bound}"),
    )
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
    a2a_v0_3_pb2_grpc.add_A2AServiceServicer_to_server(CompatGrpcHandler(handler), server)
    await server.start()
    print(f"READY {bound}", flush=True)
    await server.wait_for_termination()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    try:
        asyncio.run(serve(args.port))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
