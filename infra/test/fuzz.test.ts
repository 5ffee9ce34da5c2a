/**
 * Fuzz: a bounded, seeded run of malformed requests against every route of the API, the
 * auth server and its admin API (the real servers, on one database), asserting what the
 * README's "Bad input" promises: no 5xx, no stack trace or internal name in any body, and
 * both apps still healthy afterwards.
 *
 * Deterministic: FUZZ_SEED (default below) fixes every request. Every input that ever
 * failed is kept in fuzz-seeds.json and replayed first; when this test fails it prints the
 * failing requests in that file's format, to be added there once fixed at the root.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import path from 'node:path';
import { deflateSync, gzipSync } from 'node:zlib';
import { startTestApi, type AuthServerTestApi } from '../../apps/api/test/helpers/harness.js';

const SEED = Number(process.env['FUZZ_SEED'] ?? 20_240_601);
const REQUESTS = 3000;
const IN_FLIGHT = 6;
const BODY_CAP = 256 * 1024;

type AppName = 'api' | 'auth' | 'admin';

/** One request, as fuzz-seeds.json stores it. */
interface FuzzCase {
  app: AppName;
  method: string;
  path: string;
  /** `token`: the app's valid credential (a bearer token, the admin token); default none. */
  auth?: 'token' | 'none';
  headers?: Record<string, string>;
  body?: string;
  bodyBase64?: string;
}

interface Outcome {
  status: number;
  body: string;
}

// ---------------------------------------------------------------- deterministic randomness

/** mulberry32: small, fast, and the same sequence on every machine. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const chance = (p: number) => next() < p;
  return { next, int, pick, chance };
}
type Rng = ReturnType<typeof prng>;

// ---------------------------------------------------------------- hostile ingredients

const WEIRD_STRINGS = [
  '',
  ' ',
  'x',
  '\u0000',
  'a\u0000b',
  '%00',
  '%',
  '%zz',
  '%E0%A4%A',
  '..%2F..%2Fetc%2Fpasswd',
  '../../etc/passwd',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'valueOf',
  "'; drop table orders; --",
  '<script>alert(1)</script>',
  '\u202e\ud83d\ude00',
  '\ud800',
  '\uffff',
  'null',
  'true',
  '-1',
  '0',
  '1e309',
  '99999999999999999999999',
  'NaN',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  'x'.repeat(300),
  'x'.repeat(5000),
  '{"a":1}',
  '[]',
  'a,b,,c',
  '\r\n',
  '\t',
];

const WEIRD_VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  1e308,
  -1e308,
  Number.MAX_SAFE_INTEGER + 2,
  [],
  {},
  [null],
  { __proto__: null },
  ...WEIRD_STRINGS,
];

const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'prototype'];

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/merge-patch+json',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'multipart/form-data; boundary=x',
  'text/plain',
  'application/xml',
  'application/octet-stream',
  'application/json;;;',
  '*/*',
  'garbage',
  '',
];

const ENCODINGS = ['gzip', 'deflate', 'br', 'identity', 'gzip, gzip', 'x-bogus', 'GZIP', ''];

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];
/** Methods no route implements; @koa/router answers them 501, as RFC 9110 §15.6.2 says. */
const UNKNOWN_METHODS = ['PURGE', 'PROPFIND', 'LOCK', 'MKCOL'];

function weirdString(rng: Rng): string {
  return rng.pick(WEIRD_STRINGS);
}

function weirdValue(rng: Rng, depth = 0): unknown {
  const roll = rng.int(10);
  if (depth < 3 && roll === 0)
    return Array.from({ length: rng.int(4) }, () => weirdValue(rng, depth + 1));
  if (depth < 3 && roll === 1) return weirdObject(rng, depth + 1);
  return rng.pick(WEIRD_VALUES);
}

/** Nested far deeper than any schema, to catch recursive walkers. */
const deeplyNested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

function weirdObject(rng: Rng, depth = 0, keys: readonly string[] = []): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  const count = rng.int(5);
  for (let i = 0; i < count; i++) {
    const key =
      rng.chance(0.5) && keys.length > 0
        ? rng.pick(keys)
        : rng.chance(0.5)
          ? rng.pick(PROTOTYPE_KEYS)
          : weirdString(rng);
    Object.defineProperty(result, key, {
      value: weirdValue(rng, depth),
      enumerable: true,
      configurable: true,
      writable: true,
    });
  }
  return result;
}

/** Field names the API's and auth server's bodies know, so some fuzzed bodies pass the outer checks. */
const KNOWN_FIELDS = [
  'customer',
  'amount',
  'currency',
  'items',
  'note',
  'status',
  'email',
  'password',
  'name',
  'scopes',
  'roles',
  'orderId',
  'filename',
  'contentType',
  'size',
  'client_id',
  'client_secret',
  'grant_type',
  'redirect_uri',
  'redirect_uris',
  'code',
  'code_verifier',
  'refresh_token',
  'scope',
  'resource',
  'token',
  'user_code',
  'device_code',
  'csrf',
  'xsrf',
  'state',
  'response_type',
  'alg',
];

function fuzzBody(rng: Rng, contentType: string): Buffer | undefined {
  switch (rng.int(9)) {
    case 0:
      return undefined;
    case 1:
      return Buffer.from(JSON.stringify(weirdObject(rng, 0, KNOWN_FIELDS)));
    case 2:
      return Buffer.from(JSON.stringify(weirdValue(rng)) ?? 'undefined');
    case 3:
      return Buffer.from(deeplyNested(rng.pick([100, 5000, 30_000])));
    case 4: {
      const form = new URLSearchParams();
      for (let i = rng.int(5); i >= 0; i--) {
        form.append(rng.chance(0.6) ? rng.pick(KNOWN_FIELDS) : weirdString(rng), weirdString(rng));
      }
      return Buffer.from(form.toString());
    }
    case 5:
      return Buffer.from(Array.from({ length: rng.int(200) }, () => rng.int(256)));
    case 6:
      return Buffer.from(
        `{"${rng.pick(PROTOTYPE_KEYS)}": ${JSON.stringify(weirdValue(rng)) ?? 1}}`,
      );
    case 7:
      return Buffer.from(
        contentType.startsWith('multipart')
          ? '--x\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nabc\r\n'
          : '{"customer": ',
      );
    default:
      return Buffer.from(JSON.stringify(weirdObject(rng, 0, KNOWN_FIELDS)).slice(0, rng.int(40)));
  }
}

function encode(rng: Rng, body: Buffer, encoding: string): Buffer {
  if (!rng.chance(0.6)) return body; // the header lies about the body
  if (encoding.toLowerCase().startsWith('gzip')) {
    const gz = gzipSync(body);
    return rng.chance(0.5) ? gz : gz.subarray(0, Math.max(1, rng.int(gz.length)));
  }
  if (encoding === 'deflate') return deflateSync(body);
  return body;
}

/** Percent-encoded; a lone surrogate becomes the invalid UTF-8 bytes it would be. */
function escape(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return '%ED%A0%80';
  }
}

function fuzzSegment(rng: Rng): string {
  return escape(weirdString(rng)).replace(/%25(00|zz|E0)/, '%$1');
}

function fuzzQuery(rng: Rng): string {
  if (rng.chance(0.3)) return '';
  const keys = [
    ...PROTOTYPE_KEYS,
    'limit',
    'cursor',
    'status',
    'sort',
    'before',
    'type',
    'expires',
    'sig',
    'client_id',
    'response_type',
    'scope',
    'redirect_uri',
    'user_code',
    'a[b]',
    'a[]',
    '%00',
    weirdString(rng),
  ];
  const parts: string[] = [];
  for (let i = rng.int(4); i >= 0; i--) {
    const key = rng.pick(keys);
    const value = rng.chance(0.3) ? rng.pick(['%00', '%', '%zz', '']) : escape(weirdString(rng));
    parts.push(`${escape(key).replace('%2500', '%00')}=${value}`);
  }
  return `?${parts.join('&')}`;
}

/** A route template (`/orders/{id}`) with its parameters fuzzed, sometimes with extra segments. */
function fuzzPath(rng: Rng, template: string): string {
  let pathname = template.replace(/\{[^}]+\}|:[A-Za-z_]+/g, () => fuzzSegment(rng) || 'x');
  if (rng.chance(0.1)) pathname += `/${fuzzSegment(rng)}`;
  if (rng.chance(0.05)) pathname = pathname.replace(/\//g, '//');
  if (rng.chance(0.05)) pathname = pathname.toUpperCase();
  return pathname + fuzzQuery(rng);
}

function fuzzHeaders(rng: Rng): Record<string, string> {
  const headers: Record<string, string> = {};
  const maybe = (name: string, values: readonly string[], p = 0.2) => {
    if (rng.chance(p)) headers[name] = rng.pick(values);
  };
  maybe('accept', ['application/json', 'text/html', '*/*', 'text/event-stream', 'garbage/;;'], 0.3);
  maybe('if-match', ['"x"', '*', 'W/"1"', 'garbage', '""']);
  maybe('if-none-match', ['"x"', '*', 'W/"1"', 'garbage']);
  maybe('idempotency-key', ['k1', ' ', 'x'.repeat(300), 'é', 'a b']);
  maybe('origin', ['https://evil.example', 'null', 'http://localhost:3000', 'garbage']);
  maybe('cookie', [
    'sid=x',
    'sid=',
    'sid=%00',
    '_session=x; _interaction=y',
    'garbage',
    'sid=a; sid=b',
  ]);
  maybe('last-event-id', ['0', '-1', 'x', '99999999999999999999']);
  maybe('x-forwarded-for', ['1.2.3.4', 'garbage', '::1, ::2']);
  maybe('dpop', ['x', 'a.b.c', '']);
  maybe('range', ['bytes=0-1', 'bytes=x', 'bytes=-5']);
  maybe('sec-fetch-site', ['cross-site', 'same-origin', 'x']);
  return headers;
}

function randomCase(rng: Rng, routes: Record<AppName, string[]>, covered: Set<string>): FuzzCase {
  const app = rng.pick<AppName>(['api', 'api', 'api', 'auth', 'auth', 'admin']);
  const route = rng.pick(routes[app]);
  covered.add(`${app} ${route}`);
  const method = rng.chance(0.03) ? rng.pick(UNKNOWN_METHODS) : rng.pick(METHODS);
  const headers = fuzzHeaders(rng);
  const contentType = rng.pick(CONTENT_TYPES);
  let body: Buffer | undefined;
  if (!['GET', 'HEAD'].includes(method) && rng.chance(0.85)) {
    body = fuzzBody(rng, contentType);
    if (contentType) headers['content-type'] = contentType;
    if (body && rng.chance(0.2)) {
      const encoding = rng.pick(ENCODINGS);
      if (encoding) headers['content-encoding'] = encoding;
      body = encode(rng, body, encoding);
    }
  }
  const authRoll = rng.int(10);
  if (authRoll === 0)
    headers['authorization'] = rng.pick([
      'Bearer x',
      'Bearer ',
      'Basic %00',
      'Basic Og==',
      'DPoP a.b.c',
      'Bearer a.b.c',
      'garbage',
      `Bearer ${'x'.repeat(9000)}`,
    ]);
  return {
    app,
    method,
    path: fuzzPath(rng, route),
    // Mostly with a valid credential, so requests get past authentication to validation.
    auth: authRoll >= 3 ? 'token' : 'none',
    headers,
    ...(body ? { bodyBase64: body.toString('base64') } : {}),
  };
}

// ---------------------------------------------------------------- the servers and the run

/** What a body must never show: stack frames, source paths, library or error class names. */
const LEAKS =
  /\n\s+at |\bat [\w.<>]+ \(|node_modules|\/src\/|\.ts:\d|\.js:\d|\b(TypeError|ReferenceError|RangeError|SyntaxError|AggregateError|KnexTimeoutError|DatabaseError|ZodError|error: invalid byte sequence)\b|oops! something went wrong/;

let api: AuthServerTestApi;
let token: string;
let routes: Record<AppName, string[]>;
const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });

function baseUrl(app: AppName): string {
  if (app === 'api') return api.url;
  return app === 'auth' ? api.auth.url : api.auth.adminUrl;
}

function send(c: FuzzCase): Promise<Outcome> {
  const url = new URL(baseUrl(c.app));
  const body =
    c.bodyBase64 !== undefined
      ? Buffer.from(c.bodyBase64, 'base64')
      : c.body !== undefined
        ? Buffer.from(c.body)
        : undefined;
  const headers: Record<string, string> = { ...c.headers };
  if (c.auth === 'token')
    headers['authorization'] = `Bearer ${c.app === 'admin' ? api.auth.adminToken : token}`;
  if (body) headers['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: c.method,
        path: c.path,
        headers,
        agent,
        timeout: 10_000,
      },
      (res) => {
        // An event stream never ends by itself: its headers are the answer.
        if ((res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
          res.destroy();
          resolve({ status: res.statusCode ?? 0, body: '' });
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= BODY_CAP) chunks.push(chunk);
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
    req.end(body);
  });
}

/** A 5xx, a leak, or no answer at all; `undefined` when the answer is fine. */
async function failureOf(c: FuzzCase): Promise<string | undefined> {
  let outcome: Outcome;
  try {
    outcome = await send(c);
  } catch (error) {
    // Node's own HTTP parser may refuse a malformed request by closing the connection.
    if ((error as NodeJS.ErrnoException).code === 'ECONNRESET') return undefined;
    return `no answer: ${(error as Error).message}`;
  }
  const unknownMethod = UNKNOWN_METHODS.includes(c.method) && outcome.status === 501;
  if (outcome.status >= 500 && !unknownMethod)
    return `${outcome.status}: ${outcome.body.slice(0, 300)}`;
  const leak = LEAKS.exec(outcome.body);
  if (leak) return `${outcome.status}, body shows "${leak[0]}": ${outcome.body.slice(0, 300)}`;
  return undefined;
}

async function runAll(cases: FuzzCase[]): Promise<{ case: FuzzCase; failure: string }[]> {
  const failures: { case: FuzzCase; failure: string }[] = [];
  let next = 0;
  async function worker() {
    while (next < cases.length) {
      const c = cases[next++]!;
      const failure = await failureOf(c);
      if (failure) failures.push({ case: c, failure });
    }
  }
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return failures;
}

async function apiRoutes(): Promise<string[]> {
  const res = await fetch(`${api.url}/openapi.json`);
  const doc = (await res.json()) as { paths: Record<string, unknown> };
  return [...Object.keys(doc.paths), '/metrics', '/nope'];
}

/** A router's path in the fuzzer's form: `:uid` becomes `{uid}`, as in the OpenAPI paths. */
const templateOf = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** What the running auth server's routers declare: a new route is fuzzed without a change here. */
function authRoutes(): string[] {
  return [...api.auth.routePaths.auth.map(templateOf), '/authorize/{uid}', '/nope'];
}

function adminRoutes(): string[] {
  return api.auth.routePaths.admin.map(templateOf);
}

/** Fuzzing must not rotate the signing keys under the run's own token (that is not bad input). */
const keepsKeys = (c: FuzzCase) =>
  !(
    c.app === 'admin' &&
    c.method === 'POST' &&
    c.path.startsWith('/admin/signing-keys') &&
    c.auth === 'token'
  );

function report(failures: { case: FuzzCase; failure: string }[]): string {
  return failures
    .slice(0, 20)
    .map((f) => `${f.failure}\n  ${JSON.stringify(f.case)}`)
    .join('\n');
}

beforeAll(async () => {
  api = await startTestApi({
    // The anonymous limit would soon answer every request 429 and hide the rest.
    env: { ANON_RATE_LIMIT: '1000000', LOGIN_IP_LIMIT: '1000000', LOGIN_ACCOUNT_LIMIT: '1000000' },
  });
  token = await api.token('fuzz-admin', ['admin']);
  routes = { api: await apiRoutes(), auth: authRoutes(), admin: adminRoutes() };
}, 60_000);
afterAll(async () => {
  agent.destroy();
  await api?.close();
});

describe('fuzz', () => {
  test('every input that ever failed still gets a clean 4xx', async () => {
    const seeds = JSON.parse(
      readFileSync(path.join(import.meta.dirname, 'fuzz-seeds.json'), 'utf8'),
    ) as FuzzCase[];
    const failures = await runAll(seeds);
    expect(report(failures)).toBe('');
  });

  test(`${REQUESTS} seeded malformed requests: no 5xx, nothing internal shown, both apps healthy`, async () => {
    const rng = prng(SEED);
    const covered = new Set<string>();
    const cases = Array.from({ length: REQUESTS }, () => randomCase(rng, routes, covered)).filter(
      keepsKeys,
    );
    const all = Object.entries(routes).flatMap(([app, list]) => list.map((r) => `${app} ${r}`));
    expect(all.filter((r) => !covered.has(r))).toEqual([]);
    const failures = await runAll(cases);
    expect(report(failures)).toBe('');
    for (const app of ['api', 'auth'] as const) {
      const health = await fetch(`${baseUrl(app)}/healthz`);
      expect(health.status).toBe(200);
      expect((await fetch(`${baseUrl(app)}/readyz`)).status).toBe(200);
    }
  }, 120_000);
});
