// A real A2A 0.3 agent built only from the official @a2a-js/sdk (0.3.14) server
// classes: AgentExecutor, DefaultRequestHandler, InMemoryTaskStore and the
// SDK's Express handlers (agentCardHandler, jsonRpcHandler, restHandler).
//
// JSON-RPC at `/`, HTTP+JSON under `/rest` (the SDK's REST routes are
// `/v1/...` below that prefix), the card at `/.well-known/agent-card.json`
// advertising both (0.3 card: `url` + `preferredTransport` +
// `additionalInterfaces`). The behaviour is chosen by the first word of the
// user's message, as in tests/peers/agent.py:
//
//   echo ...  streamed echo: a chunked artifact (append, lastChunk) then completed
//   ask       input-required; a follow-up message on the same task completes it
//             with one whole artifact
//   fail      one artifact chunk without lastChunk, then failed (abandoned artifact)
//   long      working until canceled
//   direct    a direct Message reply, no task
//
// `--push` turns push notifications on: the card says
// `capabilities.pushNotifications: true`, which makes the SDK's
// DefaultRequestHandler build its own InMemoryPushNotificationStore and
// DefaultPushNotificationSender.
//
// Prints `READY <port>` on stdout once it accepts connections.

import express from 'express';
import { randomUUID } from 'node:crypto';

import { AGENT_CARD_PATH } from '@a2a-js/sdk';
import { DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import {
  UserBuilder,
  agentCardHandler,
  jsonRpcHandler,
  restHandler,
} from '@a2a-js/sdk/server/express';

import {
  CHUNK_PAUSE_MS,
  LONG_TASK_MS,
  agentArgs,
  recordMiddleware,
  serve,
  sleep,
} from '../common.mjs';

const USAGE = `usage: agent.mjs [--port N] [--public-url URL] [--record FILE] [--push]
  --port N          port on 127.0.0.1 (0 = any free port; default 0)
  --public-url URL  base URL the card advertises (default: this agent's loopback URL)
  --record FILE     append one JSON line per HTTP exchange, with the exact body bytes sent
  --push            push notifications on (the SDK's own config store and sender)
`;

const JSONRPC_PATH = '/';
const REST_PREFIX = '/rest';

function agentCard(publicUrl, push = false) {
  const base = publicUrl.replace(/\/+$/, '');
  return {
    name: 'a2a-tap test peer (a2a-js 0.3.14)',
    description: 'Echo, ask, fail, long and direct scenarios for a2a-tap tests.',
    protocolVersion: '0.3.0',
    version: '1.0.0',
    url: base + JSONRPC_PATH,
    preferredTransport: 'JSONRPC',
    additionalInterfaces: [
      { url: base + JSONRPC_PATH, transport: 'JSONRPC' },
      { url: base + REST_PREFIX, transport: 'HTTP+JSON' },
    ],
    capabilities: { streaming: true, pushNotifications: push },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'scenarios',
        name: 'scenarios',
        description: 'echo | ask | fail | long | direct',
        tags: ['test'],
      },
    ],
  };
}

const agentMessage = (text, taskId, contextId) => ({
  kind: 'message',
  role: 'agent',
  messageId: randomUUID(),
  parts: [{ kind: 'text', text }],
  ...(taskId ? { taskId } : {}),
  contextId,
});

const userText = (message) =>
  (message?.parts ?? [])
    .map((part) => (part.kind === 'text' ? part.text : ''))
    .join('')
    .trim();

const ENDS_STREAM = new Set(['completed', 'failed', 'canceled', 'rejected', 'input-required']);

class ScenarioExecutor {
  // taskId -> { contextId, wake } for `long` tasks still working.
  running = new Map();

  async execute(requestContext, eventBus) {
    try {
      await this.play(requestContext, eventBus);
    } finally {
      eventBus.finished();
    }
  }

  async play(requestContext, eventBus) {
    const { taskId, contextId } = requestContext;
    const text = userText(requestContext.userMessage);
    const words = text.split(/\s+/).filter(Boolean);
    const verb = (words[0] ?? '').toLowerCase();
    const existing = requestContext.task;

    // `final` marks the last event of a stream: the 0.3 handler stops there.
    const status = (state, message) =>
      eventBus.publish({
        kind: 'status-update',
        taskId,
        contextId,
        status: { state, ...(message ? { message } : {}), timestamp: new Date().toISOString() },
        final: ENDS_STREAM.has(state),
      });
    const artifact = (artifactId, name, value, append, lastChunk) =>
      eventBus.publish({
        kind: 'artifact-update',
        taskId,
        contextId,
        artifact: { artifactId, name, parts: [{ kind: 'text', text: value }] },
        append,
        lastChunk,
      });

    if (!existing && verb === 'direct') {
      eventBus.publish(agentMessage('direct reply', undefined, contextId));
      return;
    }

    // A new task opens with the Task; a follow-up goes on with status
    // updates, as the SDK's own 0.3 samples do.
    if (!existing) {
      eventBus.publish({
        kind: 'task',
        id: taskId,
        contextId,
        status: { state: 'submitted', timestamp: new Date().toISOString() },
        history: [requestContext.userMessage],
        artifacts: [],
      });
    }

    if (existing?.status?.state === 'input-required') {
      status('working');
      await sleep(CHUNK_PAUSE_MS);
      artifact('answer-1', 'answer', 'you said: ' + text, false, true);
      status('completed');
    } else if (verb === 'echo') {
      const chunks = words.length > 1 ? words.slice(1) : ['(nothing)'];
      status('working');
      for (const [index, word] of chunks.entries()) {
        await sleep(CHUNK_PAUSE_MS);
        artifact('echo-1', 'echo', index === 0 ? word : ' ' + word, index > 0, index === chunks.length - 1);
      }
      status('completed');
    } else if (verb === 'ask') {
      status('working');
      status('input-required', agentMessage('what is the answer?', taskId, contextId));
    } else if (verb === 'fail') {
      status('working');
      await sleep(CHUNK_PAUSE_MS);
      artifact('partial-1', 'partial', 'partial', false, false);
      await sleep(CHUNK_PAUSE_MS);
      status('failed', agentMessage('gave up', taskId, contextId));
    } else if (verb === 'long') {
      status('working');
      const canceled = await new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), LONG_TASK_MS);
        this.running.set(taskId, {
          contextId,
          wake: () => {
            clearTimeout(timer);
            resolve(true);
          },
        });
      });
      this.running.delete(taskId);
      if (!canceled) status('completed');
    } else {
      status('rejected', agentMessage('unknown scenario', taskId, contextId));
    }
  }

  async cancelTask(taskId, eventBus) {
    const job = this.running.get(taskId);
    if (!job) return; // nothing running: the handler then answers TaskNotCancelable
    eventBus.publish({
      kind: 'status-update',
      taskId,
      contextId: job.contextId,
      status: { state: 'canceled', timestamp: new Date().toISOString() },
      final: true,
    });
    job.wake();
  }
}

async function main() {
  const args = agentArgs(USAGE);
  // The SDK logs each push delivery with console.info, on stdout; stdout
  // carries the READY line alone (the tests stop reading it there, and a
  // write to the closed pipe then kills the agent), so logs go to stderr.
  console.info = console.error;
  console.log = console.error;
  const app = express();
  if (args.record) app.use(recordMiddleware(args.record));
  await serve(app, args.port, (bound) => {
    const card = agentCard(args.publicUrl ?? `http://127.0.0.1:${bound}`, args.push);
    const requestHandler = new DefaultRequestHandler(
      card,
      new InMemoryTaskStore(),
      new ScenarioExecutor()
    );
    const userBuilder = UserBuilder.noAuthentication;
    app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler }));
    app.use(REST_PREFIX, restHandler({ requestHandler, userBuilder }));
    app.use(JSONRPC_PATH, jsonRpcHandler({ requestHandler, userBuilder }));
  });
}

main().catch((error) => {
  process.stderr.write(`agent: ${error?.stack ?? error}\n`);
  process.exit(1);
});
