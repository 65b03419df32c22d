// Drive an A2A 0.3 agent with the official @a2a-js/sdk (0.3.14) client and print what it saw.
//
// Usage: client.mjs BASE_URL [--record FILE]
//
// Resolves the agent card at BASE_URL (DefaultAgentCardResolver) and, for
// each interface the 0.3 card offers (`url`/`preferredTransport` and
// `additionalInterfaces`: JSON-RPC and HTTP+JSON), builds the SDK's client
// (ClientFactory.createFromAgentCard with that transport preferred) and plays
// every scenario:
//
//   echo          streamed send, chunked artifact, completed
//   echo-unary    blocking (non-streaming) send of the same
//   ask           streamed send to input-required, then a streamed follow-up
//                 on the same task, then tasks/get
//   fail          streamed send: artifact chunk left open, failed
//   long          streamed send; tasks/resubscribe while it works;
//                 tasks/cancel; what the stream and the resubscription saw;
//                 then tasks/get
//   direct        streamed send answered by a direct Message
//   finished      on a completed task: tasks/get, tasks/cancel, tasks/resubscribe
//   unknown       tasks/get of an unknown task
//
// Prints ONE JSON document (sorted keys): outcomes per "BINDING/VERSION" and
// scenario, made only of event types, states, artifact texts, roles and
// error names/codes: no ids, timestamps or ports, so that a run straight to
// the agent and a run through a proxy compare equal. Exits 1 if the card
// cannot be fetched. Every wait is bounded; a scenario that hangs is reported
// as {"error": "timeout: ..."}.
//
// --record FILE: the SDK is given a custom fetch (fetchImpl) that tees every
// response body and appends one JSON line per exchange to FILE.

import { randomUUID } from 'node:crypto';

import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';

import {
  STEP_TIMEOUT_MS,
  Timeout,
  bounded,
  clientArgs,
  consume,
  playBounded,
  recordingFetch,
  relative,
  scrub,
  stableJson,
  until,
} from '../common.mjs';

const USAGE = 'usage: client.mjs BASE_URL [--record FILE]\n';
const BINDINGS = ['JSONRPC', 'HTTP+JSON'];
const UNKNOWN_TASK = '00000000-0000-4000-8000-000000000000';

const partsText = (parts) => (parts ?? []).map((p) => (p.kind === 'text' ? p.text : '')).join('');

function describeEvent(event) {
  switch (event?.kind) {
    case 'task':
      return {
        type: 'task',
        state: event.status?.state ?? null,
        artifacts: (event.artifacts ?? []).map((a) => partsText(a.parts)),
      };
    case 'status-update': {
      const out = { type: 'statusUpdate', state: event.status?.state ?? null, final: event.final ?? null };
      if (event.status?.message) out.message = partsText(event.status.message.parts);
      return out;
    }
    case 'artifact-update':
      return {
        type: 'artifactUpdate',
        artifact: event.artifact?.name,
        text: partsText(event.artifact?.parts),
        append: Boolean(event.append),
        lastChunk: Boolean(event.lastChunk),
      };
    case 'message':
      return {
        type: 'message',
        role: event.role,
        text: partsText(event.parts),
        hasTaskId: Boolean(event.taskId),
      };
    default:
      return { type: 'unknown', kind: event?.kind ?? null };
  }
}

function describeTask(task) {
  return {
    state: task?.status?.state ?? null,
    artifacts: Object.fromEntries((task?.artifacts ?? []).map((a) => [a.name, partsText(a.parts)])),
    historyRoles: (task?.history ?? []).map((m) => m.role),
  };
}

function describeResult(result) {
  if (result?.kind === 'message') return { message: { role: result.role, text: partsText(result.parts) } };
  return { task: describeTask(result) };
}

function describeError(error) {
  if (error instanceof Timeout) return { error: error.message };
  const rpc = error?.errorResponse?.error;
  const out = { error: error?.name ?? 'Error', message: scrub(rpc?.message ?? error?.message ?? error) };
  if (rpc?.code !== undefined) out.code = rpc.code;
  return out;
}

/** What one streamed call yielded, summarised; keeps the task's ids aside. */
class Stream {
  events = [];
  taskId = '';
  contextId = '';
  artifacts = {};
  finalState = null;
  error = null;
  ended = false;

  take(event) {
    this.events.push(describeEvent(event));
    if (event?.kind === 'task') {
      this.taskId = event.id;
      this.contextId = event.contextId;
      this.finalState = event.status?.state ?? null;
    } else if (event?.kind === 'status-update') {
      this.taskId ||= event.taskId;
      this.contextId ||= event.contextId;
      this.finalState = event.status?.state ?? null;
    } else if (event?.kind === 'artifact-update') {
      const name = event.artifact?.name;
      const text = partsText(event.artifact?.parts);
      this.artifacts[name] = event.append ? (this.artifacts[name] ?? '') + text : text;
    }
  }

  outcome() {
    const out = { events: this.events, finalState: this.finalState, artifacts: this.artifacts };
    if (this.error) out.error = this.error;
    return out;
  }
}

function params(text, taskId, contextId) {
  return {
    message: {
      kind: 'message',
      role: 'user',
      messageId: randomUUID(),
      parts: [{ kind: 'text', text }],
      ...(taskId ? { taskId } : {}),
      ...(contextId ? { contextId } : {}),
    },
  };
}

const streamed = (client, text, taskId, contextId, options = {}) =>
  consume(
    (signal) => client.sendMessageStream(params(text, taskId, contextId), { signal }),
    options.seen ?? new Stream(),
    { what: `stream ${text}`, describeError, ...options }
  );

const resubscribe = (client, id, options = {}) =>
  consume((signal) => client.resubscribeTask({ id }, { signal }), options.seen ?? new Stream(), {
    what: 'tasks/resubscribe',
    describeError,
    ...options,
  });

async function attempt(what, call) {
  try {
    return await bounded(call(), STEP_TIMEOUT_MS, what);
  } catch (error) {
    return describeError(error);
  }
}

const getTask = (client, id) => attempt('tasks/get', async () => describeTask(await client.getTask({ id })));
const cancelTask = (client, id) =>
  attempt('tasks/cancel', async () => describeTask(await client.cancelTask({ id })));

const SCENARIOS = {
  async echo(client) {
    return (await streamed(client, 'echo hello tap world')).outcome();
  },

  async 'echo-unary'(client) {
    return attempt('message/send', async () =>
      describeResult(await client.sendMessage(params('echo one two three')))
    );
  },

  async ask(client) {
    const first = await streamed(client, 'ask');
    const out = { first: first.outcome() };
    if (!first.taskId) return out;
    const follow = await streamed(client, '42', first.taskId, first.contextId);
    out.followUp = follow.outcome();
    out.followUpKeptTask = follow.taskId === first.taskId;
    out.followUpKeptContext = follow.contextId === first.contextId;
    out.getTask = await getTask(client, first.taskId);
    return out;
  },

  async fail(client) {
    return (await streamed(client, 'fail')).outcome();
  },

  async long(client) {
    const seen = new Stream();
    const working = until((s) => s.finalState === 'working');
    const stream = streamed(client, 'long', '', '', { seen, onEvent: working.onEvent, ms: 12_000 });
    await bounded(working.reached, STEP_TIMEOUT_MS, 'working').catch(() => {});
    const out = {};
    if (!seen.taskId || seen.ended) {
      await stream;
      out.stream = seen.outcome();
      out.cancel = { error: 'the stream ended before the task was working' };
      return out;
    }
    // Resubscribe to the running task; cancel it once the resubscription saw an event.
    const subscribed = until((s) => s.events.length > 0);
    const subscription = resubscribe(client, seen.taskId, { onEvent: subscribed.onEvent });
    await bounded(subscribed.reached, STEP_TIMEOUT_MS, 'resubscribed').catch(() => {});
    out.cancel = await cancelTask(client, seen.taskId);
    out.stream = (await stream).outcome();
    out.subscription = (await subscription).outcome();
    out.getTask = await getTask(client, seen.taskId);
    return out;
  },

  async direct(client) {
    return (await streamed(client, 'direct')).outcome();
  },

  async finished(client) {
    const out = {};
    let id = '';
    try {
      const result = await bounded(client.sendMessage(params('echo done')), STEP_TIMEOUT_MS, 'message/send');
      out.send = describeResult(result);
      id = result?.kind === 'task' ? result.id : '';
    } catch (error) {
      out.send = describeError(error);
      return out;
    }
    out.getTask = await getTask(client, id);
    out.cancel = await cancelTask(client, id);
    out.subscribe = (await resubscribe(client, id)).outcome();
    return out;
  },

  async unknown(client) {
    return { getTask: await getTask(client, UNKNOWN_TASK) };
  },
};

/** The card's interfaces, preferred first: [{transport, url}], one per transport. */
function interfaces(card) {
  const all = [
    { transport: card.preferredTransport ?? 'JSONRPC', url: card.url },
    ...(card.additionalInterfaces ?? []),
  ];
  const seen = new Set();
  return all.filter((i) => i.url && !seen.has(i.transport) && seen.add(i.transport));
}

async function runInterface(baseUrl, card, iface, fetchImpl) {
  const out = { endpoint: relative(iface.url, baseUrl) };
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
    preferredTransports: [iface.transport],
  });
  let client;
  try {
    client = await factory.createFromAgentCard(card);
  } catch (error) {
    return { ...out, error: describeError(error) };
  }
  for (const [name, play] of Object.entries(SCENARIOS)) {
    try {
      out[name] = await playBounded(() => play(client), name);
    } catch (error) {
      out[name] = describeError(error);
    }
  }
  return out;
}

async function main() {
  const { baseUrl, record } = clientArgs(USAGE);
  const fetchImpl = recordingFetch(record);
  let card;
  try {
    card = await bounded(
      new DefaultAgentCardResolver({ fetchImpl }).resolve(baseUrl),
      STEP_TIMEOUT_MS,
      'agent card'
    );
  } catch (error) {
    process.stderr.write(`client: cannot fetch the agent card: ${error?.message ?? error}\n`);
    process.exit(1);
  }
  const version = String(card.protocolVersion ?? '').split('.').slice(0, 2).join('.');
  const outcomes = {};
  for (const iface of interfaces(card)) {
    if (!BINDINGS.includes(iface.transport)) continue;
    outcomes[`${iface.transport}/${version}`] = await runInterface(baseUrl, card, iface, fetchImpl);
  }
  process.stdout.write(stableJson(outcomes) + '\n');
  // Streams the SDK left open (if any) must not keep the process alive.
  process.exit(0);
}

main();
