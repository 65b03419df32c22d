// Register push configs on an A2A agent (tests/peers/js/v1/agent.mjs --push)
// with the official @a2a-js/sdk (1.3.0) client and print what the caller saw;
// the JavaScript twin of tests/peers/push_client.py, same scenarios and
// the same document.
//
// Usage: push_client.mjs BASE_URL --webhook URL --webhook-record FILE
//
// For each interface the card offers (JSON-RPC and HTTP+JSON), plays three
// scenarios whose webhook URLs are `URL/<binding>-<version>/<scenario>`
// (`<binding>` is `jsonrpc` or `rest`), so the receiver's record tells them apart:
//
//   send       streamed send of `echo push one` with a config in the send's
//              configuration: a token, no authentication
//   send-auth  blocking send of `echo push two` with a config holding a token
//              and authentication (Bearer and credentials)
//   configs    streamed `ask` (no config) to input-required; Create a config
//              (id `cfg-created`, token, Bearer authentication) on that task;
//              the follow-up that completes it; once the receiver's record
//              (`--webhook-record`, written by tests/peers/webhook.py) holds
//              this config's delivery of the completed state and no more
//              come for 0.3 s (so no delivery can follow the Delete): Get,
//              List, Delete, List
//
// Prints ONE JSON document (sorted keys): event types and states, and the
// configs the agent answered with, where `URL` reads `<webhook>` and a config
// id that is the task's id reads `<task id>`: no ids, timestamps or ports.

import fs from 'node:fs';
import { parseArgs } from 'node:util';

import { DefaultAgentCardResolver } from '@a2a-js/sdk/client';

import { STEP_TIMEOUT_MS, bounded, consume, playBounded, sleep, stableJson } from '../common.mjs';
import { Stream, attempt, clientFor, describeError, request, streamed } from './client.mjs';

const USAGE = 'usage: push_client.mjs BASE_URL --webhook URL --webhook-record FILE\n';
const BINDINGS = ['JSONRPC', 'HTTP+JSON'];
const CREATED_ID = 'cfg-created';
const COMPLETED = ['"TASK_STATE_COMPLETED"', '"completed"'];
// How long `configs` waits for the receiver to record the completed state.
const DELIVERY_WAIT_MS = 10_000;
// How long no new delivery must come before the deliveries count as done.
const QUIET_MS = 300;

function args() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      webhook: { type: 'string' },
      'webhook-record': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  if (positionals.length !== 1 || !values.webhook || !values['webhook-record']) {
    process.stderr.write(USAGE);
    process.exit(2);
  }
  return {
    baseUrl: positionals[0].replace(/\/+$/, ''),
    webhook: values.webhook.replace(/\/+$/, ''),
    record: values['webhook-record'],
  };
}

const pushConfig = (fields) => ({
  tenant: '',
  id: '',
  taskId: '',
  url: '',
  token: '',
  authentication: undefined,
  ...fields,
});

const bearer = (credentials) => ({ scheme: 'Bearer', credentials });

function sendWith(text, config) {
  const req = request(text);
  req.configuration = {
    acceptedOutputModes: [],
    taskPushNotificationConfig: config,
    returnImmediately: false,
  };
  return req;
}

class Context {
  constructor(client, webhook, record, prefix) {
    this.client = client;
    this.webhook = webhook;
    this.record = record;
    this.prefix = prefix;
  }

  url(scenario) {
    return `${this.webhook}/${this.prefix}/${scenario}`;
  }

  /** A config as answered, with the webhook base and the task id named, not spelled. */
  describeConfig(config, taskId) {
    const out = {
      id: config.id === taskId ? '<task id>' : config.id || '(none)',
      taskId: config.taskId === taskId ? '<task id>' : config.taskId || '(none)',
      url: String(config.url ?? '').split(this.webhook).join('<webhook>'),
      token: config.token ?? '',
    };
    if (config.authentication) {
      out.authentication = {
        scheme: config.authentication.scheme,
        credentials: config.authentication.credentials,
      };
    }
    return out;
  }

  /** The bodies the receiver recorded for a path ending in `pathEnd` (whole
   * lines: one being written is left for the next look). */
  bodies(pathEnd) {
    const text = fs.existsSync(this.record) ? fs.readFileSync(this.record, 'utf8') : '';
    return text
      .split('\n')
      .slice(0, -1)
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .filter((seen) => seen.path.endsWith(pathEnd))
      .map((seen) => seen.body);
  }

  /** Waits until the receiver recorded a delivery of the completed state to a
   * path ending in `pathEnd` and then nothing more for that path for
   * QUIET_MS (the sender posts after the answer); false after DELIVERY_WAIT_MS. */
  async delivered(pathEnd) {
    const deadline = Date.now() + DELIVERY_WAIT_MS;
    let count = -1;
    let since = Date.now();
    while (Date.now() < deadline) {
      const bodies = this.bodies(pathEnd);
      if (bodies.length !== count) {
        count = bodies.length;
        since = Date.now();
      }
      const done = bodies.some((b) => COMPLETED.some((s) => b.includes(s)));
      if (done && Date.now() - since >= QUIET_MS) return true;
      await sleep(50);
    }
    return false;
  }
}

// A streamed send with a configuration (client.mjs's `streamed` sends none).
const streamedWith = (client, req, what) =>
  consume((signal) => client.sendMessageStream(req, { signal }), new Stream(), { what, describeError });

function describeResult(result) {
  if (result && 'messageId' in result) return { type: 'message' };
  const seen = new Stream();
  seen.take({ payload: { $case: 'task', value: result } });
  return seen.outcome();
}

const PLAYS = {
  async send(ctx) {
    const config = pushConfig({ url: ctx.url('send'), token: 'tok-send' });
    return (await streamedWith(ctx.client, sendWith('echo push one', config), 'stream echo push one')).outcome();
  },

  async 'send-auth'(ctx) {
    const config = pushConfig({ url: ctx.url('send-auth'), token: 'tok-auth', authentication: bearer('secret-send') });
    return attempt('SendMessage', async () =>
      describeResult(await ctx.client.sendMessage(sendWith('echo push two', config)))
    );
  },

  async configs(ctx) {
    const first = await streamed(ctx.client, 'ask');
    const out = { ask: first.outcome() };
    const taskId = first.taskId;
    if (!taskId) return out;
    const config = pushConfig({
      id: CREATED_ID,
      taskId,
      url: ctx.url('configs'),
      token: 'tok-created',
      authentication: bearer('secret-created'),
    });
    out.create = await attempt('CreateTaskPushNotificationConfig', async () =>
      ctx.describeConfig(await ctx.client.createTaskPushNotificationConfig(config), taskId)
    );
    out.followUp = (await streamed(ctx.client, '42', taskId, first.contextId)).outcome();
    out.completedDelivered = await ctx.delivered(`/${ctx.prefix}/configs`);
    const ids = { tenant: '', taskId, id: CREATED_ID };
    const listing = { tenant: '', taskId, pageSize: 0, pageToken: '' };
    out.get = await attempt('GetTaskPushNotificationConfig', async () =>
      ctx.describeConfig(await ctx.client.getTaskPushNotificationConfig(ids), taskId)
    );
    out.list = await attempt('ListTaskPushNotificationConfigs', async () =>
      (await ctx.client.listTaskPushNotificationConfig(listing)).configs.map((c) => ctx.describeConfig(c, taskId))
    );
    out.delete = await attempt('DeleteTaskPushNotificationConfig', async () => {
      await ctx.client.deleteTaskPushNotificationConfig(ids);
      return 'answered';
    });
    out.listAfterDelete = await attempt('ListTaskPushNotificationConfigs', async () =>
      (await ctx.client.listTaskPushNotificationConfig(listing)).configs.map((c) => ctx.describeConfig(c, taskId))
    );
    return out;
  },
};

async function runInterface(card, iface, webhook, record, prefix) {
  let client;
  try {
    client = await clientFor(card, iface, globalThis.fetch);
  } catch (error) {
    return { error: describeError(error) };
  }
  const ctx = new Context(client, webhook, record, prefix);
  const out = {};
  for (const [name, play] of Object.entries(PLAYS)) {
    try {
      out[name] = await playBounded(() => play(ctx), name);
    } catch (error) {
      out[name] = describeError(error);
    }
  }
  return out;
}

async function main() {
  const { baseUrl, webhook, record } = args();
  let card;
  try {
    card = await bounded(new DefaultAgentCardResolver().resolve(baseUrl), STEP_TIMEOUT_MS, 'agent card');
  } catch (error) {
    process.stderr.write(`push_client: cannot fetch the agent card: ${error?.message ?? error}\n`);
    process.exit(1);
  }
  const outcomes = { pushNotifications: Boolean(card.capabilities?.pushNotifications) };
  for (const iface of card.supportedInterfaces ?? []) {
    if (!BINDINGS.includes(iface.protocolBinding)) continue;
    const version = String(iface.protocolVersion ?? '').split('.').slice(0, 2).join('.');
    const key = `${iface.protocolBinding}/${version}`;
    if (key in outcomes) continue;
    const prefix = `${iface.protocolBinding === 'JSONRPC' ? 'jsonrpc' : 'rest'}-${version}`;
    outcomes[key] = await runInterface(card, iface, webhook, record, prefix);
  }
  process.stdout.write(stableJson(outcomes) + '\n');
  process.exit(0);
}

main();
