// Drive an A2A agent with the official @a2a-js/sdk (1.3.0) client and print what it saw.
//
// Usage: client.mjs BASE_URL [--record FILE]
//
// Resolves the agent card at BASE_URL (DefaultAgentCardResolver) and, for
// each interface the card offers (JSON-RPC and HTTP+JSON; a 0.3 interface
// through the SDK's own legacyCompat transports), builds the SDK's client
// (ClientFactory.createFromAgentCard on the card narrowed to that one
// interface) and plays every scenario:
//
//   echo          streamed send, chunked artifact, completed
//   echo-unary    blocking (non-streaming) send of the same
//   ask           streamed send to input-required, then a streamed follow-up
//                 on the same task, then GetTask
//   fail          streamed send: artifact chunk left open, failed
//   long          streamed send; SubscribeToTask while it works; CancelTask;
//                 what the stream and the subscription saw; then GetTask
//   direct        streamed send answered by a direct Message
//   finished      on a completed task: GetTask, CancelTask, SubscribeToTask
//   unknown       GetTask of an unknown task
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
import { pathToFileURL } from 'node:url';

import { Role, taskStateToJSON, roleToJSON } from '@a2a-js/sdk';
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

const partsText = (parts) =>
  (parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

function describeEvent(event) {
  const payload = event?.payload;
  switch (payload?.$case) {
    case 'task': {
      const task = payload.value;
      return {
        type: 'task',
        state: taskStateToJSON(task.status?.state),
        artifacts: (task.artifacts ?? []).map((a) => partsText(a.parts)),
      };
    }
    case 'statusUpdate': {
      const status = payload.value.status;
      const out = { type: 'statusUpdate', state: taskStateToJSON(status?.state) };
      if (status?.message) out.message = partsText(status.message.parts);
      return out;
    }
    case 'artifactUpdate': {
      const update = payload.value;
      return {
        type: 'artifactUpdate',
        artifact: update.artifact?.name,
        text: partsText(update.artifact?.parts),
        append: Boolean(update.append),
        lastChunk: Boolean(update.lastChunk),
      };
    }
    case 'message': {
      const message = payload.value;
      return {
        type: 'message',
        role: roleToJSON(message.role),
        text: partsText(message.parts),
        hasTaskId: Boolean(message.taskId),
      };
    }
    default:
      return { type: 'empty' };
  }
}

function describeTask(task) {
  return {
    state: taskStateToJSON(task.status?.state),
    artifacts: Object.fromEntries((task.artifacts ?? []).map((a) => [a.name, partsText(a.parts)])),
    historyRoles: (task.history ?? []).map((m) => roleToJSON(m.role)),
  };
}

function describeResult(result) {
  if (result && 'messageId' in result) {
    return { message: { role: roleToJSON(result.role), text: partsText(result.parts) } };
  }
  return { task: describeTask(result) };
}

export function describeError(error) {
  if (error instanceof Timeout) return { error: error.message };
  const out = { error: error?.name ?? 'Error', message: scrub(error?.message ?? error) };
  if (error?.reason) out.reason = error.reason;
  if (error?.envelopeCode !== undefined) out.code = error.envelopeCode;
  if (error?.statusCode !== undefined) out.httpStatus = error.statusCode;
  if (error?.cause?.name && error.cause !== error) out.cause = describeError(error.cause);
  return out;
}

/** What one streamed call yielded, summarised; keeps the task's ids aside. */
export class Stream {
  events = [];
  taskId = '';
  contextId = '';
  artifacts = {};
  finalState = null;
  error = null;
  ended = false;

  take(event) {
    this.events.push(describeEvent(event));
    const payload = event?.payload;
    if (payload?.$case === 'task') {
      this.taskId = payload.value.id;
      this.contextId = payload.value.contextId;
      this.finalState = taskStateToJSON(payload.value.status?.state);
    } else if (payload?.$case === 'statusUpdate') {
      this.taskId ||= payload.value.taskId;
      this.contextId ||= payload.value.contextId;
      this.finalState = taskStateToJSON(payload.value.status?.state);
    } else if (payload?.$case === 'artifactUpdate') {
      const update = payload.value;
      const name = update.artifact?.name;
      const text = partsText(update.artifact?.parts);
      this.artifacts[name] = update.append ? (this.artifacts[name] ?? '') + text : text;
    }
  }

  outcome() {
    const out = { events: this.events, finalState: this.finalState, artifacts: this.artifacts };
    if (this.error) out.error = this.error;
    return out;
  }
}

const textPart = (text) => ({
  content: { $case: 'text', value: text },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});

export function request(text, taskId = '', contextId = '') {
  return {
    tenant: '',
    message: {
      role: Role.ROLE_USER,
      messageId: randomUUID(),
      parts: [textPart(text)],
      taskId,
      contextId,
      extensions: [],
      metadata: undefined,
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata: undefined,
  };
}

const subscribe = (client, id, options = {}) =>
  consume((signal) => client.resubscribeTask({ tenant: '', id }, { signal }), options.seen ?? new Stream(), {
    what: 'SubscribeToTask',
    describeError,
    ...options,
  });

export const streamed = (client, text, taskId, contextId, options = {}) =>
  consume(
    (signal) => client.sendMessageStream(request(text, taskId, contextId), { signal }),
    options.seen ?? new Stream(),
    { what: `stream ${text}`, describeError, ...options }
  );

export async function attempt(what, call) {
  try {
    return await bounded(call(), STEP_TIMEOUT_MS, what);
  } catch (error) {
    return describeError(error);
  }
}

const getTask = (client, id) =>
  attempt('GetTask', async () => describeTask(await client.getTask({ tenant: '', id })));

const SCENARIOS = {
  async echo(client) {
    return (await streamed(client, 'echo hello tap world')).outcome();
  },

  async 'echo-unary'(client) {
    return attempt('SendMessage', async () =>
      describeResult(await client.sendMessage(request('echo one two three')))
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
    const working = until((s) => s.finalState === 'TASK_STATE_WORKING');
    const stream = streamed(client, 'long', '', '', { seen, onEvent: working.onEvent, ms: 12_000 });
    await bounded(working.reached, STEP_TIMEOUT_MS, 'working').catch(() => {});
    const out = {};
    if (!seen.taskId || seen.ended) {
      await stream;
      out.stream = seen.outcome();
      out.cancel = { error: 'the stream ended before the task was working' };
      return out;
    }
    // Subscribe to the running task; cancel it once the subscription saw an event.
    const subscribed = until((s) => s.events.length > 0);
    const subscription = subscribe(client, seen.taskId, { onEvent: subscribed.onEvent });
    await bounded(subscribed.reached, STEP_TIMEOUT_MS, 'subscribed').catch(() => {});
    out.cancel = await attempt('CancelTask', async () =>
      describeTask(await client.cancelTask({ tenant: '', id: seen.taskId, metadata: undefined }))
    );
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
      const result = await bounded(client.sendMessage(request('echo done')), STEP_TIMEOUT_MS, 'SendMessage');
      out.send = describeResult(result);
      id = result?.id ?? '';
    } catch (error) {
      out.send = describeError(error);
      return out;
    }
    out.getTask = await getTask(client, id);
    out.cancel = await attempt('CancelTask', async () =>
      describeTask(await client.cancelTask({ tenant: '', id, metadata: undefined }))
    );
    out.subscribe = (await subscribe(client, id)).outcome();
    return out;
  },

  async unknown(client) {
    return { getTask: await getTask(client, UNKNOWN_TASK) };
  },
};

/** The SDK's client for one interface of `card` (a 0.3 one through legacyCompat). */
export function clientFor(card, iface, fetchImpl) {
  const legacy = /^0\./.test(iface.protocolVersion ?? '');
  const factory = new ClientFactory({
    transports: [
      new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: legacy } }),
      new RestTransportFactory({ fetchImpl, legacyCompat: { enabled: legacy } }),
    ],
    preferredTransports: [iface.protocolBinding],
  });
  return factory.createFromAgentCard({ ...card, supportedInterfaces: [iface] });
}

async function runInterface(baseUrl, card, iface, fetchImpl) {
  const out = { endpoint: relative(iface.url, baseUrl) };
  let client;
  try {
    client = await clientFor(card, iface, fetchImpl);
  } catch (error) {
    return { ...out, error: describeError(error) };
  }
  out.clientProtocolVersion = client.protocolVersion;
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
  const outcomes = {};
  for (const iface of card.supportedInterfaces ?? []) {
    if (!BINDINGS.includes(iface.protocolBinding)) continue;
    const version = String(iface.protocolVersion ?? '').split('.').slice(0, 2).join('.');
    const key = `${iface.protocolBinding}/${version}`;
    if (key in outcomes) continue;
    outcomes[key] = await runInterface(baseUrl, card, iface, fetchImpl);
  }
  process.stdout.write(stableJson(outcomes) + '\n');
  // Streams the SDK left open (if any) must not keep the process alive.
  process.exit(0);
}

// Run as a program, not when push_client.mjs imports the helpers above.
if (import.meta.url === pathToFileURL(process.argv[1]).href) main();
