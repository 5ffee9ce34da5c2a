import { Agent, request } from 'node:http';
import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import argon2 from 'argon2';
import { exportJWK, generateKeyPair, jwtVerify, createLocalJWKSet, SignJWT } from 'jose';
import { createAccessTokenVerifier, createLocalKeySet, createTokenCache } from '@portcullis/claims';
import {
  clientCredentials,
  measureHttp,
  measureHttpInterleaved,
  measureOps,
  measureOpsInterleaved,
  median,
  postgresCpuMs,
  postgresUrl,
  processCpuMs,
  startTarget,
  type HttpLoad,
  type Target,
} from './lib.js';
import { startCounted, type CountedTarget } from './callgrind.js';
import { idempotencyKey, runMixed, type Operation } from './mixed.js';
import { athOf, createDpopKey, proofPool, verificationCpuUs } from './dpop.js';

export interface Row {
  section: string;
  metric: string;
  value: number | string;
  goal?: string;
}

const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;

/** Each section measures its figures and the ratios between them within the same run. */
export const sections: Record<string, () => Promise<Row[]>> = {
  /**
   * packages/claims' verifier against bare jose.jwtVerify with the same local key set: the
   * wrapper's checks (size, syntax, typ, kid, claims schema, lifetime) should cost under
   * 10% more. The cached figure is what a repeated token costs an API request. First, on a
   * quiet machine: it runs in this process, and after the HTTP loads it read a few points
   * higher.
   */
  async verify() {
    const rows: Row[] = [];
    for (const alg of ['RS256', 'ES256'] as const) {
      const { privateKey, publicKey } = await generateKeyPair(alg);
      const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg, use: 'sig' }] };
      const issuer = 'http://localhost:4000';
      const audience = 'http://localhost:3000';
      const token = await new SignJWT({ scope: 'api', roles: ['editor'], client_id: 'spa' })
        .setProtectedHeader({ alg, kid: 'k1', typ: 'at+jwt' })
        .setIssuer(issuer)
        .setAudience(audience)
        .setSubject('user-1')
        .setJti('jti-1')
        .setIssuedAt()
        .setExpirationTime('15m')
        .sign(privateKey);
      const joseKeys = createLocalJWKSet(jwks);
      const wrapper = createAccessTokenVerifier({
        issuer,
        audience,
        keys: createLocalKeySet(jwks),
      });
      // Short alternating rounds: the two differ by microseconds, the machine's speed by
      // a third within a minute.
      const { rates, versusFirst } = await measureOpsInterleaved(
        [
          () => jwtVerify(token, joseKeys, { issuer, audience, algorithms: [alg], typ: 'at+jwt' }),
          () => wrapper.verify(token),
        ],
        { rounds: 21, ms: 250 },
      );
      const [bare, wrapped] = rates as [number, number];
      const cachedVerifier = createAccessTokenVerifier({
        issuer,
        audience,
        keys: createLocalKeySet(jwks),
        cache: createTokenCache(),
      });
      const cached = await measureOps(() => cachedVerifier.verify(token));
      rows.push(
        { section: 'verify', metric: `${alg} bare jose.jwtVerify/s`, value: bare },
        { section: 'verify', metric: `${alg} verifyAccessToken/s`, value: wrapped },
        {
          section: 'verify',
          metric: `${alg} wrapper cost vs bare`,
          value: `${Math.round((versusFirst[1]! - 1) * 100)}%`,
          goal: '< 10%',
        },
        { section: 'verify', metric: `${alg} verifyAccessToken cached/s`, value: cached },
      );
    }
    return rows;
  },

  /**
   * GET /orders/:id on PostgreSQL: bare Koa (the ceiling), the API without authentication,
   * and the API with a bearer JWT from the real auth server. Each server has a process of
   * its own; the load generator runs here.
   */
  async http() {
    const auth = await startTarget('auth-server.ts', { DATABASE_URL: postgresUrl() });
    const targets: Target[] = [auth];
    try {
      const {
        url: authUrl,
        issuer,
        databaseUrl,
        clientId,
        clientSecret,
      } = auth.info as Record<string, string>;
      const env = { DATABASE_URL: databaseUrl!, ISSUER: issuer! };
      const token = await clientCredentials(authUrl!, clientId!, clientSecret!);
      const withAuth = await startTarget('api.ts', env);
      // Without a credential the per-IP limit for anonymous requests would answer 429.
      const withoutAuth = await startTarget('api.ts', {
        ...env,
        BENCH_AUTH: 'off',
        ANON_RATE_LIMIT: '1000000',
        ANON_RATE_WINDOW: '1',
      });
      const koa = await startTarget('koa-hello.ts');
      targets.push(withAuth, withoutAuth, koa);
      const headers = { authorization: `Bearer ${token}` };
      const created = await fetch(`${withAuth.info['url']}/orders`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ customer: 'bench', amount: 1999, currency: 'EUR' }),
      });
      if (created.status !== 201) throw new Error(`creating the order answered ${created.status}`);
      const path = created.headers.get('location')!;
      const [bare, stack, open, authed] = await measureHttpInterleaved([
        { url: koa.info['url']!, pid: koa.child.pid },
        // The API's whole middleware stack with neither a credential nor a database read:
        // what separates bare Koa from the route before the query.
        { url: `${withAuth.info['url']}/healthz`, pid: withAuth.child.pid },
        { url: `${withoutAuth.info['url']}${path}`, pid: withoutAuth.child.pid },
        { url: `${withAuth.info['url']}${path}`, headers, pid: withAuth.child.pid },
      ]);
      if (!bare || !stack || !open || !authed) throw new Error('missing figures');
      if (authed.non2xx || open.non2xx)
        throw new Error(`non-2xx answers: JWT ${authed.non2xx}, no auth ${open.non2xx}`);
      return [
        { section: 'http', metric: 'bare Koa req/s', value: bare.requestsPerSecond },
        {
          section: 'http',
          metric: 'GET /healthz (API middleware, no DB) req/s',
          value: stack.requestsPerSecond,
        },
        { section: 'http', metric: 'GET /orders/:id no auth req/s', value: open.requestsPerSecond },
        {
          section: 'http',
          metric: 'GET /orders/:id bearer JWT req/s',
          value: authed.requestsPerSecond,
        },
        { section: 'http', metric: 'GET /orders/:id bearer JWT p99 ms', value: authed.p99Ms },
        ...(
          [
            ['bare Koa', bare],
            ['GET /healthz', stack],
            ['GET /orders/:id no auth', open],
            ['GET /orders/:id bearer JWT', authed],
          ] as const
        ).map(([name, figure]) => ({
          section: 'http',
          metric: `${name}: server CPU µs/request`,
          value: figure.cpuUsPerRequest ?? Number.NaN,
        })),
        { section: 'http', metric: 'GET /orders/:id no auth p99 ms', value: open.p99Ms },
        {
          section: 'http',
          metric: 'JWT / no auth',
          value: ratio(authed.requestsPerSecond, open.requestsPerSecond),
          goal: '>= 0.8',
        },
        {
          section: 'http',
          metric: 'JWT / bare Koa',
          value: ratio(authed.requestsPerSecond, bare.requestsPerSecond),
          goal: '>= 0.5',
        },
        {
          // What the ratio would be if each server had a core to itself: steadier than
          // the rates on this shared 2-core machine, where the load generator competes.
          section: 'http',
          metric: 'JWT / bare Koa by server CPU per request',
          value: ratio(bare.cpuUsPerRequest!, authed.cpuUsPerRequest!),
          goal: '>= 0.5',
        },
        {
          section: 'http',
          metric: 'API peak RSS MB (JWT run)',
          value: withAuth.peakRssMb(),
          goal: '<= 150',
        },
      ];
    } finally {
      await Promise.all(targets.map((t) => t.stop()));
    }
  },

  /**
   * Instructions per request (valgrind's callgrind, user space, every thread of the server
   * process) of bare Koa, the API's GET /healthz and its GET /orders/:id with a bearer JWT
   * from the real auth server, on PostgreSQL. Unlike rates and CPU times on this shared
   * machine, the counts repeat within a few percent whatever else runs.
   */
  async instructions() {
    const auth = await startTarget('auth-server.ts', { DATABASE_URL: postgresUrl() });
    const counted: CountedTarget[] = [];
    try {
      const info = auth.info as Record<string, string>;
      const token = await clientCredentials(info['url']!, info['clientId']!, info['clientSecret']!);
      const headers = { authorization: `Bearer ${token}` };
      const koa = await startCounted('koa-hello.ts');
      counted.push(koa);
      const bare = await koa.count(koa.target.info['url']!);
      const { api, base, orderUrl } = await countedApiWithOrder(info, token);
      counted.push(api);
      const healthz = await api.count(`${base}/healthz`);
      const order = await api.count(orderUrl, { headers });
      return [
        { section: 'instructions', metric: 'bare Koa Ir/request', value: bare },
        { section: 'instructions', metric: 'GET /healthz Ir/request', value: healthz },
        { section: 'instructions', metric: 'GET /orders/:id bearer JWT Ir/request', value: order },
        {
          section: 'instructions',
          metric: 'GET /orders/:id bearer JWT / bare Koa by Ir',
          value: ratio(bare, order),
          goal: '>= 0.5',
        },
      ];
    } finally {
      await Promise.all([...counted.map((t) => t.stop()), auth.stop()]);
    }
  },

  /**
   * GET /orders/:id on PostgreSQL with a DPoP-bound token and a fresh proof per request,
   * next to the same read with a bearer token, on one API process, measured interleaved.
   * Proofs are signed ahead of each run (bench/dpop.ts); the API keeps the proof jtis in
   * memory (no REDIS_URL here), so a Redis round trip per request is not in the figure.
   */
  async dpop() {
    const auth = await startTarget('auth-server.ts', { DATABASE_URL: postgresUrl() });
    const targets: Target[] = [auth];
    try {
      const info = auth.info as Record<string, string>;
      const key = createDpopKey();
      const bearer = await clientCredentials(
        info['url']!,
        info['clientId']!,
        info['clientSecret']!,
      );
      const bound = await clientCredentials(
        info['url']!,
        info['clientId']!,
        info['clientSecret']!,
        'api',
        key,
      );
      const memoryLog = path.join(await mkdtemp(path.join(tmpdir(), 'portcullis-bench-')), 'api');
      const api = await startTarget('api.ts', {
        DATABASE_URL: info['databaseUrl']!,
        ISSUER: info['issuer']!,
        BENCH_MEMORY_LOG: memoryLog,
      });
      targets.push(api);
      const base = api.info['url']!;
      const created = await fetch(`${base}/orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        body: JSON.stringify({ customer: 'bench', amount: 1999, currency: 'EUR' }),
      });
      if (created.status !== 201) throw new Error(`creating the order answered ${created.status}`);
      const url = `${base}${created.headers.get('location')!}`;
      const proofs = proofPool(key, url, bound);
      const loads: HttpLoad[] = [
        { url, headers: { authorization: `Bearer ${bearer}` }, pid: api.child.pid },
        // The bearer read carrying a proof's bytes, unread: what receiving a proof costs.
        {
          url,
          headers: { authorization: `Bearer ${bearer}`, 'x-padding': proofs.sample(1)[0]! },
          pid: api.child.pid,
        },
        {
          url,
          headers: { authorization: `DPoP ${bound}` },
          pid: api.child.pid,
          perRequest: {
            // Enough for a run at 5,000 requests a second.
            prepare: (seconds: number) => proofs.fill(seconds * 5000),
            headers: () => ({ dpop: proofs.next() }),
          },
        },
      ];
      const [plain, padded, dpop] = await measureHttpInterleaved(loads, { runs: 3, seconds: 4 });
      // CPU per request depends on the rate (more requests per event-loop turn share its
      // fixed cost): compared again with both at the same rate, 80% of the DPoP read's.
      const sameRate = Math.round(0.8 * (dpop?.requestsPerSecond ?? 0));
      const [plainAtRate, , dpopAtRate] = await measureHttpInterleaved(loads, {
        runs: 3,
        seconds: 4,
        overallRate: sameRate,
      });
      if (!plain || !dpop) throw new Error('missing figures');
      if (plain.non2xx || dpop.non2xx)
        throw new Error(`non-2xx answers: bearer ${plain.non2xx}, DPoP ${dpop.non2xx}`);
      // The one cost a DPoP read cannot avoid, measured here while the API is idle.
      const verification = Math.round(verificationCpuUs(key, proofs.sample(2000)));
      const bearerCpu = plain.cpuUsPerRequest ?? Number.NaN;
      const dpopCpu = dpop.cpuUsPerRequest ?? Number.NaN;
      return [
        {
          section: 'dpop',
          metric: 'GET /orders/:id bearer JWT req/s',
          value: plain.requestsPerSecond,
        },
        {
          section: 'dpop',
          metric: 'GET /orders/:id DPoP JWT req/s',
          value: dpop.requestsPerSecond,
        },
        { section: 'dpop', metric: 'GET /orders/:id DPoP JWT p99 ms', value: dpop.p99Ms },
        { section: 'dpop', metric: 'bearer: server CPU µs/request', value: bearerCpu },
        {
          section: 'dpop',
          metric: 'bearer with a proof-sized header: server CPU µs/request',
          value: padded?.cpuUsPerRequest ?? Number.NaN,
        },
        { section: 'dpop', metric: 'one proof verification alone, CPU µs', value: verification },
        {
          section: 'dpop',
          metric: 'DPoP: server CPU µs/request',
          value: dpopCpu,
          goal: `<= ${Math.round((bearerCpu + verification) * 1.2)} (1.2 × (bearer + one verification))`,
        },
        {
          section: 'dpop',
          metric: 'DPoP CPU / (bearer + one verification)',
          value: ratio(dpopCpu, bearerCpu + verification),
          goal: '<= 1.2',
        },
        {
          section: 'dpop',
          metric: `at ${sameRate} req/s each: bearer / DPoP server CPU µs/request`,
          value: `${plainAtRate?.cpuUsPerRequest} / ${dpopAtRate?.cpuUsPerRequest}`,
        },
        {
          section: 'dpop',
          metric: `at ${sameRate} req/s each: DPoP CPU / (bearer + one verification)`,
          value: ratio(
            dpopAtRate?.cpuUsPerRequest ?? Number.NaN,
            (plainAtRate?.cpuUsPerRequest ?? Number.NaN) + verification,
          ),
          goal: '<= 1.2',
        },
        {
          section: 'dpop',
          metric: 'DPoP / bearer',
          value: ratio(dpop.requestsPerSecond, plain.requestsPerSecond),
        },
        {
          section: 'dpop',
          metric: 'DPoP / bearer by server CPU per request',
          value: ratio(plain.cpuUsPerRequest!, dpop.cpuUsPerRequest!),
        },
      ];
    } finally {
      await Promise.all(targets.map((t) => t.stop()));
    }
  },

  /**
   * The dpop section's split in instructions (callgrind), which this shared machine cannot
   * skew: GET /orders/:id with a bearer token and with a DPoP-bound one and a fresh proof
   * per request, and the instructions of the proof's signature check inside the DPoP read
   * (EVP_DigestVerify with all it calls). What the DPoP read costs besides the bearer read
   * and that one check is the rest of the proof checks and the larger request.
   */
  async dpopInstructions() {
    const auth = await startTarget('auth-server.ts', { DATABASE_URL: postgresUrl() });
    const counted: CountedTarget[] = [];
    try {
      const info = auth.info as Record<string, string>;
      const key = createDpopKey();
      const credentials = [info['url']!, info['clientId']!, info['clientSecret']!] as const;
      const bearer = await clientCredentials(...credentials);
      const bound = await clientCredentials(...credentials, 'api', key);
      const { api, orderUrl: url } = await countedApiWithOrder(info, bearer);
      counted.push(api);
      // Signed as sent: this process's work is not counted, and every iat is fresh.
      const ath = athOf(bound);
      const options = { requests: 2000, warmup: 1500 };
      const plain = await api.count(url, {
        ...options,
        headers: { authorization: `Bearer ${bearer}` },
      });
      const dpop = await api.countWithin(url, 'EVP_DigestVerify', {
        ...options,
        headers: () => ({ authorization: `DPoP ${bound}`, dpop: key.proof('GET', url, { ath }) }),
      });
      return [
        { section: 'dpop-ir', metric: 'GET /orders/:id bearer JWT Ir/request', value: plain },
        { section: 'dpop-ir', metric: 'GET /orders/:id DPoP JWT Ir/request', value: dpop.total },
        { section: 'dpop-ir', metric: 'of which the proof signature check', value: dpop.within },
        {
          section: 'dpop-ir',
          metric: 'DPoP - bearer - signature check, Ir/request',
          value: dpop.total - plain - dpop.within,
        },
        {
          section: 'dpop-ir',
          metric: 'DPoP Ir / (bearer + one signature check)',
          value: ratio(dpop.total, plain + dpop.within),
          goal: '<= 1.2',
        },
      ];
    } finally {
      await Promise.all([...counted.map((t) => t.stop()), auth.stop()]);
    }
  },

  /**
   * client_credentials tokens per second at POST /token, Portcullis on PostgreSQL next to
   * oidc-provider with its in-memory adapter and the same token settings, per algorithm.
   */
  async tokens() {
    const rows: Row[] = [];
    for (const alg of ['ES256', 'RS256'] as const) {
      const auth = await startTarget('auth-server.ts', {
        DATABASE_URL: postgresUrl(),
        SIGNING_ALG: alg,
      });
      const memory = await startTarget('oidc-memory.ts', { SIGNING_ALG: alg });
      try {
        const post = (t: Target) => ({
          url: `${t.info['url']}/token`,
          method: 'POST' as const,
          headers: {
            authorization: `Basic ${Buffer.from(`${t.info['clientId']}:${t.info['clientSecret']}`).toString('base64')}`,
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: 'grant_type=client_credentials&scope=api',
        });
        const [ours, theirs] = await measureHttpInterleaved([post(auth), post(memory)]);
        if (!ours || !theirs) throw new Error('missing figures');
        if (ours.non2xx || theirs.non2xx) {
          throw new Error(`non-2xx answers: portcullis ${ours.non2xx}, in-memory ${theirs.non2xx}`);
        }
        rows.push(
          {
            section: 'tokens',
            metric: `${alg} client_credentials/s (PostgreSQL)`,
            value: ours.requestsPerSecond,
            goal: alg === 'ES256' ? '>= 1,600' : '',
          },
          {
            section: 'tokens',
            metric: `${alg} oidc-provider in-memory/s`,
            value: theirs.requestsPerSecond,
          },
          {
            section: 'tokens',
            metric: `${alg} Portcullis / in-memory`,
            value: ratio(ours.requestsPerSecond, theirs.requestsPerSecond),
            goal: alg === 'ES256' ? '>= 0.8' : '',
          },
          {
            section: 'tokens',
            metric: `${alg} auth-server peak RSS MB`,
            value: auth.peakRssMb(),
            goal: '<= 200',
          },
        );
      } finally {
        await Promise.all([auth.stop(), memory.stop()]);
      }
    }
    return rows;
  },

  /**
   * Refresh-token rotations per second on PostgreSQL: CHAINS grants, each rotated back to
   * back (every answer carries the next refresh token), with the atomic consume in place,
   * in rounds alternating with oidc-provider on its in-memory adapter (the library's own
   * ceiling on this machine, same algorithm and scopes). RS256 is the default signing
   * algorithm; ES256 is measured too. Each rotation signs two JWTs (the access token and
   * the ID token), so the CPU each process spent per rotation and the cost of one
   * signature are printed next to the rate: on 2 cores they show how far the rate can go.
   */
  async refresh() {
    const CHAINS = 16;
    const ROUNDS = 3;
    const rows: Row[] = [];
    for (const alg of ['RS256', 'ES256'] as const) {
      const chains = { BENCH_CHAINS: String(CHAINS), SIGNING_ALG: alg };
      const auth = await startTarget('auth-server.ts', { DATABASE_URL: postgresUrl(), ...chains });
      const memory = await startTarget('oidc-memory.ts', chains);
      const ours = rotations(auth);
      const theirs = rotations(memory);
      try {
        const cpu = { auth: 0, postgres: 0, loadGenerator: 0, rotations: 0 };
        const rates: number[][] = [[], []];
        for (let round = 0; round < ROUNDS; round++) {
          const before = {
            auth: processCpuMs(auth.child.pid!),
            postgres: postgresCpuMs(),
            loadGenerator: process.cpuUsage(),
            rotations: ours.count(),
          };
          // Each loop owns one chain: a chain is strictly sequential, as a real client is.
          rates[0]!.push(await measureOps(ours.rotate, 3000, CHAINS, 1));
          const used = process.cpuUsage(before.loadGenerator);
          cpu.auth += processCpuMs(auth.child.pid!) - before.auth;
          cpu.postgres += postgresCpuMs() - before.postgres;
          cpu.loadGenerator += (used.user + used.system) / 1000;
          cpu.rotations += ours.count() - before.rotations;
          rates[1]!.push(await measureOps(theirs.rotate, 3000, CHAINS, 1));
        }
        const [rate, reference] = rates.map((r) => Math.round(median(r))) as [number, number];
        const perRotation = (ms: number) => Math.round((ms * 1000) / Math.max(cpu.rotations, 1));
        rows.push(
          {
            section: 'refresh',
            metric: `${alg} rotations/s (PostgreSQL)`,
            value: rate,
            goal: alg === 'RS256' ? '>= 600' : '',
          },
          {
            section: 'refresh',
            metric: `${alg} rotations/s (oidc-provider in-memory)`,
            value: reference,
          },
          {
            section: 'refresh',
            metric: `${alg} PostgreSQL / in-memory`,
            value: median(rates[0]!.map((r, i) => ratio(r, rates[1]![i]!))),
            goal: '>= 0.8',
          },
          {
            section: 'refresh',
            metric: `${alg} failed rotations`,
            value: ours.failures() + theirs.failures(),
            goal: '0',
          },
          {
            section: 'refresh',
            metric: `${alg} CPU µs/rotation: auth server`,
            value: perRotation(cpu.auth),
          },
          {
            section: 'refresh',
            metric: `${alg} CPU µs/rotation: PostgreSQL`,
            value: perRotation(cpu.postgres),
          },
          {
            section: 'refresh',
            metric: `${alg} CPU µs/rotation: load generator`,
            value: perRotation(cpu.loadGenerator),
          },
        );
      } finally {
        ours.close();
        theirs.close();
        await Promise.all([auth.stop(), memory.stop()]);
      }
      // One signature as the auth server makes it (jose, WebCrypto), for the budget above.
      const { privateKey } = await generateKeyPair(alg);
      const sign = () =>
        new SignJWT({ sub: 'bench', scope: 'openid api' })
          .setProtectedHeader({ alg, typ: 'at+jwt' })
          .sign(privateKey);
      const before = process.cpuUsage();
      let signatures = 0;
      await measureOps(() => sign().then(() => signatures++), 1000);
      const used = process.cpuUsage(before);
      rows.push({
        section: 'refresh',
        metric: `${alg} CPU µs/signature (two per rotation)`,
        value: Math.round((used.user + used.system) / signatures),
      });
    }
    return rows;
  },

  /**
   * Everything at once for MIXED_SECONDS (default 20): client-credentials tokens, order
   * reads and writes and payments at the API, refresh rotations, each from clients of its
   * own, against the compiled apps on PostgreSQL. Per operation: rate, p50/p99 and errors
   * (there should be none); per app: peak RSS under that load.
   */
  async mixed() {
    const seconds = Number(process.env['MIXED_SECONDS'] ?? 20);
    const CHAINS = 8;
    const auth = await startTarget('auth-server.ts', {
      DATABASE_URL: postgresUrl(),
      BENCH_CHAINS: String(CHAINS),
    });
    const targets: Target[] = [auth];
    try {
      const info = auth.info as Record<string, string>;
      const token = await clientCredentials(info['url']!, info['clientId']!, info['clientSecret']!);
      const memoryLog = path.join(await mkdtemp(path.join(tmpdir(), 'portcullis-bench-')), 'api');
      const api = await startTarget('api.ts', {
        DATABASE_URL: info['databaseUrl']!,
        ISSUER: info['issuer']!,
        BENCH_MEMORY_LOG: memoryLog,
      });
      targets.push(api);
      const base = api.info['url']!;
      const bearer = { authorization: `Bearer ${token}` };
      const json = { ...bearer, 'content-type': 'application/json' };
      const order = JSON.stringify({ customer: 'bench', amount: 1999, currency: 'EUR' });
      const created = await fetch(`${base}/orders`, { method: 'POST', headers: json, body: order });
      if (created.status !== 201) throw new Error(`creating the order answered ${created.status}`);
      const orderPath = created.headers.get('location')!;
      const orderId = orderPath.split('/').pop()!;
      const chains = [...(auth.info['refreshTokens'] as string[])];
      const basic = Buffer.from(`${info['clientId']}:${info['clientSecret']}`).toString('base64');
      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      const is2xx = (status: number) => status >= 200 && status < 300;
      const operations: Operation[] = [
        {
          name: 'client_credentials tokens',
          loops: 2,
          ok: is2xx,
          send: (http) =>
            http(`${info['url']}/token`, {
              method: 'POST',
              headers: { ...form, authorization: `Basic ${basic}` },
              body: 'grant_type=client_credentials&scope=api',
            }),
        },
        {
          name: 'refresh rotations',
          loops: CHAINS,
          ok: is2xx,
          send: (http, i) =>
            http(`${info['url']}/token`, {
              method: 'POST',
              headers: form,
              body: new URLSearchParams({
                grant_type: 'refresh_token',
                client_id: info['spaClientId']!,
                refresh_token: chains[i]!,
              }).toString(),
            }),
          onOk: (body, i) => {
            chains[i] = (JSON.parse(body) as { refresh_token: string }).refresh_token;
          },
        },
        {
          name: 'GET /orders/:id',
          loops: 4,
          ok: is2xx,
          send: (http) => http(`${base}${orderPath}`, { headers: bearer }),
        },
        {
          name: 'POST /orders',
          loops: 2,
          ok: is2xx,
          send: (http) => http(`${base}/orders`, { method: 'POST', headers: json, body: order }),
        },
        {
          name: 'POST /payments',
          loops: 2,
          ok: is2xx,
          send: (http) =>
            http(`${base}/payments`, {
              method: 'POST',
              headers: { ...json, 'idempotency-key': idempotencyKey() },
              body: JSON.stringify({ orderId, amount: 1999, currency: 'EUR' }),
            }),
        },
      ];
      const figures = await runMixed(operations, seconds);
      const rows: Row[] = [];
      for (const f of figures) {
        rows.push(
          { section: 'mixed', metric: `${f.name}/s`, value: f.perSecond },
          { section: 'mixed', metric: `${f.name} p50 / p99 ms`, value: `${f.p50Ms} / ${f.p99Ms}` },
          {
            section: 'mixed',
            metric: `${f.name} errors`,
            value: f.firstError ? `${f.errors} (${f.firstError.slice(0, 80)})` : f.errors,
            goal: '0',
          },
        );
      }
      rows.push(...memoryRows(memoryLog, seconds));
      rows.push(
        { section: 'mixed', metric: 'API peak RSS MB', value: api.peakRssMb(), goal: '<= 150' },
        {
          section: 'mixed',
          metric: 'auth-server peak RSS MB',
          value: auth.peakRssMb(),
          goal: '<= 200',
        },
      );
      return rows;
    } finally {
      await Promise.all(targets.map((t) => t.stop()));
    }
  },

  /**
   * Password logins per second at the API's POST /login (argon2id verify + session write)
   * next to bare argon2id verifies at the same concurrency and parameters.
   */
  async logins() {
    // The same parameters packages/accounts uses (OWASP minimum for argon2id).
    const { ARGON2_OPTIONS } = await import('@portcullis/accounts');
    // Logins: 4 clients at once. The bare rate is argon2id's best on this machine, one hash
    // per core (more at once share the cores and thrash caches: the 4-at-once rate is
    // printed too); packages/accounts runs at most one hash per core for the same reason.
    const CONCURRENCY = 4;
    const cores = availableParallelism();
    const hash = await argon2.hash('benchmark password', ARGON2_OPTIONS);
    const auth = await startTarget('auth-server.ts', { DATABASE_URL: postgresUrl() });
    const api = await startTarget('api.ts', {
      DATABASE_URL: auth.info['databaseUrl'],
      ISSUER: auth.info['issuer'],
      // POST /login carries no credential: keep the per-IP anonymous limit out of the way.
      ANON_RATE_LIMIT: '1000000',
      ANON_RATE_WINDOW: '1',
      // An attempt counts until it succeeds; the logins a finished run leaves in flight
      // would otherwise meet the next run's within the account limit of 5.
      LOGIN_ACCOUNT_LIMIT: '1000',
      LOGIN_IP_LIMIT: '1000',
    });
    try {
      // Bare verifies and logins in alternating rounds, compared round by round: argon2id
      // is pure CPU, so the machine's drift would otherwise decide the ratio.
      const bareRates: number[] = [];
      const oversubscribedRates: number[] = [];
      const loginRates: number[] = [];
      const verify = () => argon2.verify(hash, 'benchmark password');
      for (let round = 0; round < 3; round++) {
        bareRates.push(await measureOps(verify, 1000, cores));
        oversubscribedRates.push(await measureOps(verify, 1000, CONCURRENCY));
        const login = await measureHttp(`${api.info['url']}/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: auth.info['email'], password: auth.info['password'] }),
          connections: CONCURRENCY,
          runs: 1,
          seconds: 3,
        });
        if (login.non2xx) throw new Error(`non-2xx logins: ${login.non2xx}`);
        loginRates.push(login.requestsPerSecond);
      }
      const bare = median(bareRates);
      const login = { requestsPerSecond: median(loginRates) };
      const loginsPerVerify = median(loginRates.map((rate, i) => rate / bareRates[i]!));
      return [
        {
          section: 'logins',
          metric: `bare argon2id verify/s (${cores} in flight, one per core)`,
          value: bare,
        },
        {
          section: 'logins',
          metric: `bare argon2id verify/s (${CONCURRENCY} in flight)`,
          value: median(oversubscribedRates),
        },
        {
          section: 'logins',
          metric: `POST /login/s (PostgreSQL, ${CONCURRENCY} clients)`,
          value: login.requestsPerSecond,
        },
        {
          section: 'logins',
          metric: 'logins / bare verify',
          value: ratio(loginsPerVerify, 1),
          goal: '>= 0.95',
        },
      ];
    } finally {
      await Promise.all([api.stop(), auth.stop()]);
    }
  },
};

/**
 * Rotates the refresh-token chains a target printed (`refreshTokens`, of `spaClientId`):
 * `rotate(i)` redeems chain i's token and keeps the next one; `count` is every success.
 */
/** The API under callgrind on the auth server's database, and one order to read (made with `token`). */
async function countedApiWithOrder(info: Record<string, string>, token: string) {
  const api = await startCounted('api.ts', {
    DATABASE_URL: info['databaseUrl']!,
    ISSUER: info['issuer']!,
  });
  const base = api.target.info['url']!;
  const created = await fetch(`${base}/orders`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ customer: 'bench', amount: 1999, currency: 'EUR' }),
  });
  if (created.status !== 201) {
    await api.stop();
    throw new Error(`creating the order answered ${created.status}`);
  }
  return { api, base, orderUrl: `${base}${created.headers.get('location')!}` };
}

function rotations(target: Target) {
  const tokens = [...(target.info['refreshTokens'] as string[])];
  const url = new URL('/token', target.info['url'] as string);
  // node:http on kept-alive sockets, one per chain: fetch spent about twice the CPU per
  // request, taken from the same two cores as the servers measured.
  const agent = new Agent({ keepAlive: true, maxSockets: tokens.length });
  let failures = 0;
  let count = 0;
  const post = (body: string) =>
    new Promise<string>((resolve, reject) => {
      const req = request(
        url,
        {
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const rotate = async (i: number) => {
    try {
      const text = await post(
        new URLSearchParams({
          grant_type: 'refresh_token',
          client_id: target.info['spaClientId'],
          refresh_token: tokens[i]!,
        }).toString(),
      );
      const body = JSON.parse(text) as { refresh_token?: string };
      if (!body.refresh_token) throw new Error(`rotation failed: ${text}`);
      tokens[i] = body.refresh_token;
      count++;
    } catch {
      failures++;
    }
  };
  return { rotate, failures: () => failures, count: () => count, close: () => agent.destroy() };
}

/**
 * The API's resident set and heap in use at 1 minute, half-way and the end of a mixed run
 * (from BENCH_MEMORY_LOG, every 5 s): a leak keeps rising, a filling cache levels off.
 */
function memoryRows(file: string, seconds: number): Row[] {
  let lines: { at: number; rss: number; heapUsed: number }[];
  try {
    lines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  } catch {
    return [];
  }
  if (lines.length < 2) return [];
  const start = lines[0]!.at - 5000;
  const at = (s: number) => lines.find((l) => l.at - start >= s * 1000) ?? lines.at(-1)!;
  const points = [...new Set([60, Math.round(seconds / 2), seconds])].filter((s) => s <= seconds);
  // MiB, as peakRssMb reads VmHWM.
  const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
  const label = points.map((s) => (s % 60 === 0 ? `${s / 60} min` : `${s} s`)).join(' / ');
  return [
    {
      section: 'mixed',
      metric: `API RSS MB at ${label}`,
      value: points.map((s) => mb(at(s).rss)).join(' / '),
    },
    {
      section: 'mixed',
      metric: `API heap in use MB at ${label}`,
      value: points.map((s) => mb(at(s).heapUsed)).join(' / '),
    },
  ];
}
