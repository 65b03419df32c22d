"""Register push configs on tests/peers/agent.py (started with --push) with the
official a2a-sdk client, and print what the caller saw.

Usage: push_client.py BASE_URL --webhook URL --webhook-record FILE [--only BINDING/VERSION]

For each interface the card offers (JSON-RPC and HTTP+JSON, protocol 1.0 and
0.3, as tests/peers/client.py chooses them), plays three scenarios whose
webhook URLs are `URL/<binding>-<version>/<scenario>` (so the receiver's
record tells them apart; `<binding>` is `jsonrpc` or `rest`):

  send       streamed send of `echo push one` with a config in the send's
             configuration: a token, no authentication
  send-auth  blocking send of `echo push two` with a config holding a token
             and authentication (Bearer and credentials)
  configs    streamed `ask` (no config) to input-required; Create a config
             (id `cfg-created`, token, Bearer authentication) on that task;
             the follow-up that completes it; once the receiver's record
             (`--webhook-record`, written by tests/peers/webhook.py) holds this
             config's delivery of the completed state and no more come for
             0.3 s (so no delivery can follow the Delete): Get, List,
             Delete, List

Prints ONE JSON document (sorted keys) of outcomes: event types and states,
and the configs the agent answered with, where `URL` reads `<webhook>` and a
config id that is the task's id reads `<task id>`: no ids, timestamps or
ports, so a run straight to the agent and one through a proxy compare equal.
Exits 1 if the card cannot be fetched.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.client import Client
from a2a.types.a2a_pb2 import (
    AgentCard,
    AuthenticationInfo,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    SendMessageRequest,
    TaskPushNotificationConfig,
)

from client import INTERFACES, Stream, describe_error, http_client, stream, user_message

SCENARIO_TIMEOUT = 20.0
# How long `configs` waits for the receiver to record the completed state.
DELIVERY_WAIT = 10.0
CREATED_ID = "cfg-created"
COMPLETED = ('"TASK_STATE_COMPLETED"', '"completed"')
# How long no new delivery must come before the deliveries count as done.
QUIET = 0.3


class Context:
    """One interface's run: its clients, the webhook base and the receiver's record."""

    def __init__(self, streaming: Client, unary: Client, webhook: str, record: Path, prefix: str) -> None:
        self.streaming = streaming
        self.unary = unary
        self.webhook = webhook.rstrip("/")
        self.record = record
        self.prefix = prefix

    def url(self, scenario: str) -> str:
        return f"{self.webhook}/{self.prefix}/{scenario}"

    def describe_config(self, config: TaskPushNotificationConfig, task_id: str) -> dict[str, Any]:
        """A config as answered, with the webhook base and the task id named, not spelled."""
        out: dict[str, Any] = {
            "id": "<task id>" if config.id == task_id else config.id or "(none)",
            "taskId": "<task id>" if config.task_id == task_id else config.task_id or "(none)",
            "url": config.url.replace(self.webhook, "<webhook>"),
            "token": config.token,
        }
        if config.HasField("authentication"):
            out["authentication"] = {
                "scheme": config.authentication.scheme,
                "credentials": config.authentication.credentials,
            }
        return out

    def bodies(self, path_end: str) -> list[str]:
        """The bodies the receiver recorded for a path ending in `path_end`
        (whole lines: one being written is left for the next look)."""
        if not self.record.exists():
            return []
        lines = self.record.read_text(encoding="utf-8").split("\n")[:-1]
        seen = [json.loads(line) for line in lines if line]
        return [s["body"] for s in seen if s["path"].endswith(path_end)]

    async def delivered(self, path_end: str) -> bool:
        """Waits until the receiver recorded a delivery to a path ending in
        `path_end` whose body names the completed state (1.0 or 0.3 spelling)
        and then nothing more for that path for QUIET (a sender that posts
        the live task can show the completed state before its last
        delivery); False after DELIVERY_WAIT."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + DELIVERY_WAIT
        count, since = -1, loop.time()
        while loop.time() < deadline:
            bodies = self.bodies(path_end)
            if len(bodies) != count:
                count, since = len(bodies), loop.time()
            done = any(s in b for b in bodies for s in COMPLETED)
            if done and loop.time() - since >= QUIET:
                return True
            await asyncio.sleep(0.05)
        return False


def narrowed(card: AgentCard, binding: str, version: str) -> AgentCard | None:
    """The card with only its interface for (binding, version), or None; a
    0.3 card's "0.3.0" is version "0.3" (tests/peers/py03/agent.py's card)."""
    for interface in card.supported_interfaces:
        got = interface.protocol_version
        if interface.protocol_binding == binding and (got == version or got.startswith(version + ".")):
            one = AgentCard()
            one.CopyFrom(card)
            del one.supported_interfaces[:]
            one.supported_interfaces.append(interface)
            return one
    return None


def send_with(text: str, config: TaskPushNotificationConfig) -> SendMessageRequest:
    request = user_message(text)
    request.configuration.task_push_notification_config.CopyFrom(config)
    return request


def bearer(credentials: str) -> AuthenticationInfo:
    return AuthenticationInfo(scheme="Bearer", credentials=credentials)


async def scenario_send(ctx: Context) -> dict[str, Any]:
    config = TaskPushNotificationConfig(url=ctx.url("send"), token="tok-send")
    return (await stream(ctx.streaming, send_with("echo push one", config))).outcome()


async def scenario_send_auth(ctx: Context) -> dict[str, Any]:
    config = TaskPushNotificationConfig(
        url=ctx.url("send-auth"), token="tok-auth", authentication=bearer("secret-send")
    )
    return (await stream(ctx.unary, send_with("echo push two", config))).outcome()


async def call(out: dict[str, Any], key: str, action: Any) -> Any:
    """Awaits `action`, storing an error outcome under `key` if it raises."""
    try:
        return await action
    except Exception as error:  # noqa: BLE001 - every failure is an outcome
        out[key] = describe_error(error)
        return None


async def scenario_configs(ctx: Context) -> dict[str, Any]:
    first = await stream(ctx.streaming, user_message("ask"))
    out: dict[str, Any] = {"ask": first.outcome()}
    task_id = first.task_id
    if not task_id:
        return out
    config = TaskPushNotificationConfig(
        task_id=task_id,
        id=CREATED_ID,
        url=ctx.url("configs"),
        token="tok-created",
        authentication=bearer("secret-created"),
    )
    created = await call(out, "create", ctx.streaming.create_task_push_notification_config(config))
    if created is not None:
        out["create"] = ctx.describe_config(created, task_id)
    follow: Stream = await stream(ctx.streaming, user_message("42", task_id, first.context_id))
    out["followUp"] = follow.outcome()
    out["completedDelivered"] = await ctx.delivered(f"/{ctx.prefix}/configs")
    get = GetTaskPushNotificationConfigRequest(task_id=task_id, id=CREATED_ID)
    got = await call(out, "get", ctx.streaming.get_task_push_notification_config(get))
    if got is not None:
        out["get"] = ctx.describe_config(got, task_id)
    listing = ListTaskPushNotificationConfigsRequest(task_id=task_id)
    listed = await call(out, "list", ctx.streaming.list_task_push_notification_configs(listing))
    if listed is not None:
        out["list"] = [ctx.describe_config(c, task_id) for c in listed.configs]
    delete = DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=CREATED_ID)
    out["delete"] = "answered"  # replaced by the error, if any
    await call(out, "delete", ctx.streaming.delete_task_push_notification_config(delete))
    after = await call(out, "listAfterDelete", ctx.streaming.list_task_push_notification_configs(listing))
    if after is not None:
        out["listAfterDelete"] = [ctx.describe_config(c, task_id) for c in after.configs]
    return out


SCENARIOS = {"send": scenario_send, "send-auth": scenario_send_auth, "configs": scenario_configs}


async def run_interface(
    card: AgentCard, binding: str, version: str, webhook: str, record: Path
) -> dict[str, Any]:
    one = narrowed(card, binding, version)
    if one is None:
        return {"error": "not offered by the card"}
    prefix = ("jsonrpc" if binding == "JSONRPC" else "rest") + "-" + version
    out: dict[str, Any] = {}
    async with http_client(None) as http_streaming, http_client(None) as http_unary:
        streaming = ClientFactory(
            ClientConfig(streaming=True, httpx_client=http_streaming, supported_protocol_bindings=[binding])
        ).create(one)
        unary = ClientFactory(
            ClientConfig(streaming=False, httpx_client=http_unary, supported_protocol_bindings=[binding])
        ).create(one)
        ctx = Context(streaming, unary, webhook, record, prefix)
        for name, play in SCENARIOS.items():
            try:
                out[name] = await asyncio.wait_for(play(ctx), SCENARIO_TIMEOUT)
            except asyncio.TimeoutError:
                out[name] = {"error": "timeout"}
    return out


async def main_async(base_url: str, webhook: str, record: Path, only: str | None) -> dict[str, Any]:
    async with http_client(None) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
    outcomes: dict[str, Any] = {"pushNotifications": card.capabilities.push_notifications}
    for binding, version in INTERFACES:
        key = f"{binding}/{version}"
        if only is None or only == key:
            outcomes[key] = await run_interface(card, binding, version, webhook, record)
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base_url")
    parser.add_argument("--webhook", required=True, help="base URL of tests/peers/webhook.py")
    parser.add_argument("--webhook-record", required=True, help="the receiver's --record file")
    parser.add_argument("--only", default=None, help='one of "JSONRPC/1.0", "HTTP+JSON/0.3", ...')
    args = parser.parse_args()
    try:
        outcomes = asyncio.run(main_async(args.base_url, args.webhook, Path(args.webhook_record), args.only))
    except Exception as error:  # noqa: BLE001
        print(f"push_client: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)
    json.dump(outcomes, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
