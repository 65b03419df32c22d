// Shared by tests/peers/js/v1 and tests/peers/js/v03: command-line parsing,
// raw-byte recording of HTTP exchanges, bounded waits and id scrubbing.
// Plain Node (>= 18), no dependencies: it has none of the SDK's code, so the
// peers' protocol behaviour is all the SDK's own.

import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';

export { sleep };

// Small pauses between events so that each one leaves the server as its own
// write, as a real agent's would; the order of events never depends on them.
export const CHUNK_PAUSE_MS = 10;
// `long` works until canceled, but never longer than this.
export const LONG_TASK_MS = 60_000;
// Every wait in a client is bounded: a scenario that hangs is reported, not waited for.
export const SCENARIO_TIMEOUT_MS = 15_000;
export const STEP_TIMEOUT_MS = 8_000;
// The whole client run: scenarios not started by then are reported as timed out.
export const RUN_DEADLINE_MS = 45_000;
const started = Date.now();

/** Plays `play()` for at most `ms` and never past the run deadline. */
export function playBounded(play, what, ms = SCENARIO_TIMEOUT_MS) {
  const left = started + RUN_DEADLINE_MS - Date.now();
  if (left <= 0) return Promise.reject(new Timeout(`run deadline, ${what} not played`));
  return bounded(play(), Math.min(ms, left), what);
}

/** `agent.mjs --port N [--public-url URL] [--record FILE] [--push]`. */
export function agentArgs(usage) {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      'public-url': { type: 'string' },
      record: { type: 'string' },
      push: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(usage);
    process.exit(0);
  }
  const port = Number(values.port ?? '0');
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`agent: bad --port ${values.port}\n${usage}`);
    process.exit(2);
  }
  return { port, publicUrl: values['public-url'], record: values.record, push: Boolean(values.push) };
}

/** `client.mjs BASE_URL [--record FILE]`. */
export function clientArgs(usage) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { record: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    process.stdout.write(usage);
    process.exit(0);
  }
  if (positionals.length !== 1) {
    process.stderr.write(usage);
    process.exit(2);
  }
  return { baseUrl: positionals[0].replace(/\/+$/, ''), record: values.record };
}

function appendRecord(file, entry) {
  fs.appendFileSync(file, JSON.stringify(entry) + '\n');
}

/**
 * Express middleware (mount it first) that appends one JSON line per HTTP
 * exchange to `file`: {"method","path","status","content_type","body_b64"},
 * the body being the exact bytes the response wrote, captured by wrapping
 * `res.write`/`res.end` before anything is sent. A line is written when the
 * response finishes or its connection closes, so lines are in completion order.
 */
export function recordMiddleware(file) {
  return (req, res, next) => {
    const chunks = [];
    const keep = (chunk, encoding) => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
      chunks.push(
        Buffer.isBuffer(chunk)
          ? Buffer.from(chunk)
          : chunk instanceof Uint8Array
            ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
            : Buffer.from(String(chunk), typeof encoding === 'string' ? encoding : 'utf8')
      );
    };
    const write = res.write;
    const end = res.end;
    res.write = function (chunk, encoding, callback) {
      keep(chunk, encoding);
      return write.call(this, chunk, encoding, callback);
    };
    res.end = function (chunk, encoding, callback) {
      keep(chunk, encoding);
      return end.call(this, chunk, encoding, callback);
    };
    let done = false;
    const flush = () => {
      if (done) return;
      done = true;
      const contentType = res.getHeader('content-type');
      appendRecord(file, {
        method: req.method,
        path: req.originalUrl,
        status: res.statusCode,
        content_type: contentType === undefined ? null : String(contentType),
        body_b64: Buffer.concat(chunks).toString('base64'),
      });
    };
    res.once('finish', flush);
    res.once('close', flush);
    next();
  };
}

/**
 * A fetch for the SDK's client: the same as `baseFetch`, and when `file` is
 * set it tees every response body and appends one JSON line per exchange
 * (same fields as `recordMiddleware`) once the body has been read to its end
 * (or the read failed, e.g. an aborted stream: then the bytes got so far).
 */
export function recordingFetch(file, baseFetch = globalThis.fetch) {
  if (!file) return baseFetch;
  return async (input, init) => {
    const isRequest = typeof Request !== 'undefined' && input instanceof Request;
    const url = new URL(isRequest ? input.url : String(input));
    const method = (init?.method ?? (isRequest ? input.method : 'GET')).toUpperCase();
    const response = await baseFetch(input, init);
    const entry = {
      method,
      path: url.pathname + url.search,
      status: response.status,
      content_type: response.headers.get('content-type'),
      body_b64: '',
    };
    if (response.body === null) {
      appendRecord(file, entry);
      return response;
    }
    const [forSdk, forRecord] = response.body.tee();
    (async () => {
      const chunks = [];
      const reader = forRecord.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          chunks.push(Buffer.from(value));
        }
      } catch {
        // keep what arrived
      }
      entry.body_b64 = Buffer.concat(chunks).toString('base64');
      appendRecord(file, entry);
    })();
    return new Response(forSdk, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/**
 * Binds `app` to 127.0.0.1:port (0 = any free port), then lets `mount(port)`
 * add the routes (the card must know the bound port), then prints
 * `READY <port>`: from then on it accepts connections with every route in place.
 */
export function serve(app, port, mount) {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, '127.0.0.1');
    server.once('error', reject);
    server.once('listening', () => {
      const bound = server.address().port;
      mount(bound);
      process.stdout.write(`READY ${bound}\n`);
      resolve(server);
    });
  });
}

export class Timeout extends Error {
  constructor(what) {
    super(`timeout: ${what}`);
    this.name = 'Timeout';
  }
}

/** `promise`, or a Timeout error after `ms`; the timer never keeps the process alive. */
export function bounded(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Timeout(what)), ms);
    timer.unref?.();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const URL_RE = /https?:\/\/[^\s'"]+/g;

/** Removes ids and URLs (ports) from a message so that outcomes compare equal. */
export function scrub(text) {
  return String(text ?? '').replace(UUID, '<id>').replace(URL_RE, '<url>');
}

/** The path of `url` relative to `base` ("/" or "/rest"), or the URL itself. */
export function relative(url, base) {
  const b = base.replace(/\/+$/, '');
  if (!url.startsWith(b)) return url;
  return url.slice(b.length) || '/';
}

/** Sorted-key, indented JSON, like the Python client's `json.dump(..., sort_keys=True)`. */
export function stableJson(value) {
  const sort = (v) => {
    if (Array.isArray(v)) return v.map(sort);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, sort(v[k])])
      );
    }
    return v;
  };
  return JSON.stringify(sort(value), null, 1);
}

/**
 * Consumes `open(signal)` (an async iterable of events) into `seen` (an
 * object with `take(event)`, `error` and `ended`) for at most `ms`: past
 * that the call is aborted and `seen.error` says timeout. `onEvent(seen)`
 * runs after each event and once at the end. Resolves to `seen`.
 */
export async function consume(open, seen, { ms = STEP_TIMEOUT_MS, what = 'stream', onEvent, describeError }) {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new Timeout(what)), ms);
  try {
    const iterate = (async () => {
      for await (const event of open(abort.signal)) {
        seen.take(event);
        onEvent?.(seen);
      }
    })();
    await bounded(iterate, ms + 1000, what);
  } catch (error) {
    seen.error = describeError(abort.signal.aborted ? new Timeout(what) : error);
  } finally {
    clearTimeout(timer);
    seen.ended = true;
    onEvent?.(seen);
  }
  return seen;
}

/** `reached` resolves once `check(seen)` holds for a stream being consumed, or it ended. */
export function until(check) {
  let resolve;
  const reached = new Promise((r) => (resolve = r));
  return {
    reached,
    onEvent: (seen) => {
      if (seen.ended || check(seen)) resolve();
    },
  };
}
