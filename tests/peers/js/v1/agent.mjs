// A real A2A 1.0 agent built only from the official @a2a-js/sdk (1.3.0) server
// classes: AgentExecutor, DefaultRequestHandler, InMemoryTaskStore and the
// SDK's Express handlers (agentCardHandler, jsonRpcHandler, restHandler).
//
// JSON-RPC at `/`, HTTP+JSON under `/rest`, the card at
// `/.well-known/agent-card.json` advertising both (protocol 1.0 only: the
// SDK's v0.3 compat layer is left off). The behaviour is chosen by the first
// word of the user's message, as in tests/peers/agent.py:
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
// DefaultPushNotificationSender (fetch, 5 s timeout, no retry). Without it the
// card says false and the config methods answer PushNotificationNotSupported.
//
// Prints `READY <port>` on stdout once it accepts connections.

import express from 'express';
import { randomUUID } from 'node:crypto';

import { AGENT_CARD_PATH, Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
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

function agentCard(publicUrl, push) {
  const base = publicUrl.replace(/\/+$/, '');
  return {
    name: 'a2a-tap test peer (a2a-js 1.3.0)',
    description: 'Echo, ask, fail, long and direct scenarios for a2a-tap tests.',
    supportedInterfaces: [
      { url: base + JSONRPC_PATH, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
      { url: base + REST_PREFIX, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
    ],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: push, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'scenarios',
        name: 'scenarios',
        description: 'echo | ask | fail | long | direct',
        tags: ['test'],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

const textPart = (text) => ({
  content: { $case: 'text', value: text },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});

const agentMessage = (text, taskId, contextId) => ({
  role: Role.ROLE_AGENT,
  messageId: randomUUID(),
  parts: [textPart(text)],
  taskId: taskId ?? '',
  contextId,
  extensions: [],
  metadata: undefined,
  referenceTaskIds: [],
});

const userText = (message) =>
  (message?.parts ?? [])
    .map((part) => (part.content?.$case === 'text' ? part.content.value : ''))
    .join('')
    .trim();

class ScenarioExecutor {
  // taskId -> { contextId, wake } for `long` tasks still working.
  running = new Map();

  async execute(requestContext, eventBus) {
    const { taskId, contextId } = requestContext;
    const text = userText(requestContext.userMessage);
    const words = text.split(/\s+/).filter(Boolean);
    const verb = (words[0] ?? '').toLowerCase();
    const existing = requestContext.task;

    const status = (state, message) =>
      eventBus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: { state, message, timestamp: new Date().toISOString() },
          metadata: undefined,
        })
      );
    const artifact = (artifactId, name, value, append, lastChunk) =>
      eventBus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId,
            name,
            description: '',
            parts: [textPart(value)],
            metadata: undefined,
            extensions: [],
          },
          append,
          lastChunk,
          metadata: undefined,
        })
      );

    if (!existing && verb === 'direct') {
      eventBus.publish(AgentEvent.message(agentMessage('direct reply', undefined, contextId)));
      return;
    }

    // The 1.x handler requires every execution (follow-ups too) to open with
    // a Task or a Message: a new task, or the stored one for a follow-up.
    if (existing) {
      eventBus.publish(AgentEvent.task(existing));
    } else {
      eventBus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: {
            state: TaskState.TASK_STATE_SUBMITTED,
            message: undefined,
            timestamp: new Date().toISOString(),
          },
          artifacts: [],
          history: [requestContext.userMessage],
          metadata: undefined,
        })
      );
    }

    if (existing?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED) {
      status(TaskState.TASK_STATE_WORKING);
      await sleep(CHUNK_PAUSE_MS);
      artifact('answer-1', 'answer', 'you said: ' + text, false, true);
      status(TaskState.TASK_STATE_COMPLETED);
    } else if (verb === 'echo') {
      const chunks = words.length > 1 ? words.slice(1) : ['(nothing)'];
      status(TaskState.TASK_STATE_WORKING);
      for (const [index, word] of chunks.entries()) {
        await sleep(CHUNK_PAUSE_MS);
        artifact('echo-1', 'echo', index === 0 ? word : ' ' + word, index > 0, index === chunks.length - 1);
      }
      status(TaskState.TASK_STATE_COMPLETED);
    } else if (verb === 'ask') {
      status(TaskState.TASK_STATE_WORKING);
      status(
        TaskState.TASK_STATE_INPUT_REQUIRED,
        agentMessage('what is the answer?', taskId, contextId)
      );
    } else if (verb === 'fail') {
      status(TaskState.TASK_STATE_WORKING);
      await sleep(CHUNK_PAUSE_MS);
      artifact('partial-1', 'partial', 'partial', false, false);
      await sleep(CHUNK_PAUSE_MS);
      status(TaskState.TASK_STATE_FAILED, agentMessage('gave up', taskId, contextId));
    } else if (verb === 'long') {
      status(TaskState.TASK_STATE_WORKING);
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
      if (!canceled) status(TaskState.TASK_STATE_COMPLETED);
    } else {
      status(TaskState.TASK_STATE_REJECTED, agentMessage('unknown scenario', taskId, contextId));
    }
  }

  async cancelTask(taskId, eventBus) {
    const job = this.running.get(taskId);
    if (!job) return; // nothing running: the handler then answers TaskNotCancelable
    eventBus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: job.contextId,
        status: {
          state: TaskState.TASK_STATE_CANCELED,
          message: undefined,
          timestamp: new Date().toISOString(),
        },
        metadata: undefined,
      })
    );
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
