import { describe, expect, it } from '@jest/globals';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { parseAllDocuments, parse } from 'yaml';
import { parseApiConfig } from '@portcullis/api';
import { parseAuthConfig } from '@portcullis/auth-server';
import { parseWebConfig } from '@portcullis/web';
import { ENTRIES, HEAP_OPTIONS } from '../scripts/build.mjs';

// No container engine runs here, so the deployment files are checked statically: they
// parse, their commands name files that exist, their ports, probes and secrets match what
// the apps' own config parsing makes of the environment they set.
const root = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

type Env = Record<string, string>;
// Compose files and manifests are untyped YAML; the assertions below are the schema.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Doc = Record<string, any>;

// Containers run each app compiled ahead of time (`pnpm build`), not through tsx.
const apps = {
  'auth-server': {
    main: 'apps/auth-server/dist/main.js',
    port: (env: Env) => parseAuthConfig(env).port,
  },
  api: { main: 'apps/api/dist/main.js', port: (env: Env) => parseApiConfig(env).port },
} as const;

/** The TypeScript entry `pnpm build` compiles into `compiled`, which must exist. */
function sourceOf(compiled: string): string {
  const entry = ENTRIES.find(([, out]) => out === compiled);
  expect(entry).toBeDefined();
  expect(existsSync(path.join(root, entry![0]))).toBe(true);
  return entry![0];
}

const GENERATE = path.join(root, 'infra/scripts/generate-secrets.sh');
const generate = (...args: string[]) =>
  execFileSync('sh', [GENERATE, ...args], { encoding: 'utf8' });

/** The .env `generate-secrets.sh compose` writes. */
function generatedEnv(): Env {
  const text = generate('compose', 'auth.portcullis.test', 'api.portcullis.test', 'ops@x.test');
  return Object.fromEntries(
    text
      .trim()
      .split('\n')
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

/**
 * Compose's interpolation: ${NAME}, ${NAME:-default}, ${NAME:?error} from `vars` (a `:?`
 * variable missing from them is an error, as compose makes it); `$$` is a literal `$`.
 */
function interpolate(value: string, vars: Env): string {
  return value
    .replace(
      /\$\{(\w+)(?::-([^}]*)|:\?([^}]*))?\}/g,
      (_m, name: string, fallback?: string, error?: string) => {
        const set = vars[name];
        if (set !== undefined && set !== '') return set;
        if (error !== undefined) throw new Error(`${name} unset: ${error}`);
        return fallback ?? '';
      },
    )
    .replaceAll('$$', '$');
}
const interpolateEnv = (env: Env, vars: Env): Env =>
  Object.fromEntries(Object.entries(env).map(([k, v]) => [k, interpolate(String(v), vars)]));

/** A tag that names a version (digits), never `latest` or none. */
const PINNED = /^[\w./-]+:(?!latest$)[\w.-]*\d[\w.-]*$/;

function compose(file: string): { services: Record<string, Doc>; volumes: Doc } {
  // Compose files use YAML merge keys (<<) for what the apps share.
  return parse(read(file), { merge: true });
}

/** Services that run once and exit (compose waits for service_completed_successfully). */
const oneShots = (services: Record<string, Doc>) =>
  new Set(
    Object.values(services).flatMap((s) =>
      Object.entries((s['depends_on'] ?? {}) as Record<string, { condition?: string }>)
        .filter(([, d]) => d.condition === 'service_completed_successfully')
        .map(([name]) => name),
    ),
  );

function expectHealthchecksAndPinnedImages(services: Record<string, Doc>) {
  const once = oneShots(services);
  for (const [name, service] of Object.entries(services)) {
    if (once.has(name)) {
      expect({ name, restart: service['restart'] }).toEqual({ name, restart: 'no' });
    } else {
      expect({ name, healthcheck: Array.isArray(service['healthcheck']?.['test']) }).toEqual({
        name,
        healthcheck: true,
      });
    }
    // Third-party images by version; ours is built from this repository.
    if (!service['build']) expect({ name, image: service['image'] }).toMatchObject({ name });
    if (!service['build']) expect(service['image']).toMatch(PINNED);
  }
}

/** `node infra/scripts/healthcheck.mjs <urls>` from a compose healthcheck. */
function healthcheckUrls(service: Doc): string[] {
  const test = service['healthcheck']['test'] as string[];
  expect(test.slice(0, 3)).toEqual(['CMD', 'node', 'infra/scripts/healthcheck.mjs']);
  return test.slice(3);
}

describe('infra/docker/Dockerfile', () => {
  const dockerfile = read('infra/docker/Dockerfile');
  const stages = dockerfile.split(/^(?=FROM )/m).filter((s) => s.startsWith('FROM'));
  const runtime = stages.at(-1)!;
  const build = stages.find((s) => /^FROM \S+ AS build$/m.test(s))!;

  it('builds on a pinned Node 24 in stages and runs as a non-root user', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages) expect(stage).toMatch(/^FROM node:24\.\d+\.\d+-bookworm-slim AS /);
    expect(runtime).toMatch(/^USER node$/m);
    expect(build).toMatch(/--frozen-lockfile/);
    expect(build).toMatch(/^RUN pnpm build$/m);
    expect(runtime).toMatch(/^CMD \["node", "apps\/api\/dist\/main\.js"\]$/m);
    // The heap caps the benchmark measured peak RSS with.
    expect(runtime).toContain(`ENV NODE_OPTIONS="${HEAP_OPTIONS}"`);
  });

  it('copies every workspace package manifest before installing from the lockfile', () => {
    const install = dockerfile.indexOf('RUN pnpm install');
    for (const dir of ['apps', 'packages']) {
      for (const name of readdirSync(path.join(root, dir))) {
        const manifest = `${dir}/${name}/package.json`;
        if (!existsSync(path.join(root, manifest))) continue;
        const copy = dockerfile.indexOf(`COPY ${manifest} ${dir}/${name}/`);
        expect({ manifest, copied: copy !== -1 && copy < install }).toEqual({
          manifest,
          copied: true,
        });
      }
    }
  });

  it('ships production dependencies only: no devDependencies, no test browser', () => {
    // The last install of the build stage, after `pnpm build`, reinstalls with --prod from a
    // clean tree and leaves packages/testing (@sparticuz/chromium) out.
    const runs = build.match(/^RUN (?:[^\n]*\\\n)*[^\n]*/gm) ?? [];
    const lastInstall = runs.filter((r) => r.includes('pnpm install')).at(-1)!;
    expect(build.indexOf(lastInstall)).toBeGreaterThan(build.indexOf('RUN pnpm build'));
    expect(lastInstall).toContain('--prod');
    expect(lastInstall).toContain("--filter '!@portcullis/testing'");
    expect(lastInstall).toMatch(
      /rm -rf node_modules apps\/\*\/node_modules packages\/\*\/node_modules/,
    );
    expect(lastInstall).toContain('packages/testing');
    // The runtime stage installs nothing and takes only named parts of the build stage.
    expect(runtime).not.toMatch(/^RUN .*(pnpm|npm) (install|i|add|ci)\b/m);
    const copies = runtime.match(/^COPY .+$/gm) ?? [];
    for (const copy of copies) expect(copy).toMatch(/^COPY --from=build \/app\/\S+ \S+$/);
    expect(copies.join('\n')).not.toMatch(/\/app \/app|\/app \.|testing|chromium/);
  });

  it('.dockerignore keeps keys, secrets and local state out of the build context', () => {
    const ignored = read('.dockerignore').split('\n');
    for (const pattern of [
      '.git',
      '**/node_modules',
      'data/',
      '.test-output/',
      '**/.env',
      '**/*.pem',
      '**/admin-token',
    ]) {
      expect(ignored).toContain(pattern);
    }
    expect(existsSync(path.join(root, 'infra/docker/.dockerignore'))).toBe(false);
  });

  it('healthcheck.mjs passes on 2xx from every URL and fails otherwise (the image has no curl)', async () => {
    const server = createServer((req, res) => {
      res.statusCode = req.url === '/readyz' ? 200 : 503;
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const check = (...urls: string[]) =>
      // Not spawnSync: the server answers from this process.
      new Promise<number | null>((resolve) => {
        spawn(process.execPath, [path.join(root, 'infra/scripts/healthcheck.mjs'), ...urls], {
          stdio: 'ignore',
        }).on('exit', resolve);
      });
    try {
      expect(await check(`${base}/readyz`)).toBe(0);
      expect(await check(`${base}/readyz`, `${base}/down`)).toBe(1);
      expect(await check('http://127.0.0.1:9/readyz')).toBe(1);
      expect(await check()).toBe(1);
    } finally {
      server.close();
    }
  });
});

describe('infra/docker/compose.yaml (local)', () => {
  const { services, volumes } = compose('infra/docker/compose.yaml');
  const app = services['portcullis']!;
  const env = interpolateEnv(app['environment'], {});

  it('runs every app in one process, on the issuer and origins a browser on the host uses', () => {
    expect(app['command']).toEqual(['node', 'infra/dist/start-all.js']);
    sourceOf('infra/dist/start-all.js');
    expect(env['NODE_ENV']).not.toBe('production');
    const auth = parseAuthConfig(env);
    const api = parseApiConfig(env);
    const web = parseWebConfig(env);
    // Signed in to on http://localhost, with the demo seed.
    expect(auth.issuer).toBe(`http://localhost:${auth.port}`);
    expect(auth.seedDemo).toBe(true);
    expect(web.origin).toBe(`http://localhost:${web.port}`);
    expect(auth.demoWebOrigin).toBe(web.origin);
    expect(api.audience).toBe(`http://localhost:${api.port}`);
    expect(env['DATABASE_URL']).toMatch(/@postgres:5432\//);
    expect(env['REDIS_URL']).toBe('redis://redis:6379');
    // Each port the browser or the CLI uses is published at the same number, on loopback only.
    const published = app['ports'] as string[];
    expect(published.sort()).toEqual(
      [auth.port, auth.adminPort, api.port, web.port].map((p) => `127.0.0.1:${p}:${p}`).sort(),
    );
    // The admin API listens on the container's interface so that port reaches it.
    expect(auth.adminHost).toBe('0.0.0.0');
  });

  it('publishes nothing beyond loopback', () => {
    for (const service of Object.values(services)) {
      for (const port of (service['ports'] ?? []) as string[])
        expect(port).toMatch(/^127\.0\.0\.1:/);
    }
  });

  it('has a healthcheck on every service, checking each app where it listens', () => {
    expectHealthchecksAndPinnedImages(services);
    const auth = parseAuthConfig(env);
    const api = parseApiConfig(env);
    const web = parseWebConfig(env);
    expect(healthcheckUrls(app)).toEqual([
      `http://127.0.0.1:${auth.port}/readyz`,
      `http://127.0.0.1:${api.port}/readyz`,
      `http://127.0.0.1:${web.port}/healthz`,
    ]);
  });

  it('keeps the database, generated secrets and uploads in volumes', () => {
    // DATA_DIR is ./data under the image's WORKDIR.
    expect(read('infra/docker/Dockerfile')).toMatch(/^WORKDIR \/app$/m);
    expect(parseAuthConfig(env).dataDir).toBe('./data');
    expect(parseApiConfig(env).uploads).toMatchObject({ store: 'disk', dir: './data/uploads' });
    expect(app['volumes']).toContain('portcullis-data:/app/data');
    expect(services['postgres']!['volumes']).toContain('postgres-data:/var/lib/postgresql/data');
    expect(Object.keys(volumes)).toEqual(
      expect.arrayContaining(['portcullis-data', 'postgres-data']),
    );
  });

  it('sends mail to MailDev, whose web inbox is on the host at 1080', () => {
    const { smtpUrl } = parseAuthConfig(env).mail;
    const maildev = services['maildev']!;
    expect(maildev['image']).toMatch(/^maildev\/maildev:/);
    const smtp = new URL(smtpUrl!);
    expect(`${smtp.protocol}//${smtp.hostname}`).toBe('smtp://maildev');
    expect(smtp.port).toBe(maildev['environment']['MAILDEV_SMTP_PORT']);
    expect(maildev['ports']).toEqual([
      `127.0.0.1:1080:${maildev['environment']['MAILDEV_WEB_PORT']}`,
    ]);
    expect(app['depends_on']['maildev']).toEqual({ condition: 'service_healthy' });
  });

  it('switches uploads to MinIO with the s3 profile', () => {
    const s3 = parseApiConfig(
      interpolateEnv(app['environment'], { UPLOADS_STORE: 's3', S3_BUCKET: 'portcullis-uploads' }),
    );
    expect(s3.uploads.s3).toMatchObject({
      bucket: 'portcullis-uploads',
      endpoint: 'http://minio:9000',
      forcePathStyle: true,
    });
    expect(services['minio']!['profiles']).toEqual(['s3']);
    expect(services['minio-bucket']!['entrypoint'].join(' ')).toContain('local/portcullis-uploads');
    expect(services['minio']!['environment']['MINIO_ROOT_PASSWORD']).toBe(
      s3.uploads.s3!.credentials!.secretAccessKey,
    );
  });
});

describe('infra/docker/compose.production.yaml', () => {
  const { services, volumes } = compose('infra/docker/compose.production.yaml');
  const vars = generatedEnv();
  const envOf = (name: string) => interpolateEnv(services[name]!['environment'], vars);

  it('starts each app in production on the secrets generate-secrets.sh writes', () => {
    for (const [name, app] of Object.entries(apps)) {
      const service = services[name]!;
      expect(service['command']).toEqual(['node', app.main]);
      sourceOf(app.main);
      const env = envOf(name);
      expect(env['NODE_ENV']).toBe('production');
      // parse*Config throws on a missing, malformed or placeholder secret.
      const port = app.port(env);
      expect(healthcheckUrls(service)).toEqual([`http://127.0.0.1:${port}/readyz`]);
      // Only the TLS front is published.
      expect(service['ports']).toBeUndefined();
    }
    const auth = parseAuthConfig(envOf('auth-server'));
    expect(auth.issuer).toBe('https://auth.portcullis.test');
    expect(auth.seedDemo).toBe(false);
    expect(auth.trustProxy).toBe(true);
    const api = parseApiConfig(envOf('api'));
    expect(api.audience).toBe('https://api.portcullis.test');
    expect(api.jwksUrl).toBe(`http://auth-server:${auth.port}/.well-known/jwks.json`);
  });

  it('refuses to start without generated secrets', () => {
    const env = services['auth-server']!['environment'] as Env;
    for (const name of ['ADMIN_TOKEN', 'COOKIE_KEYS', 'KEY_ENCRYPTION_KEY']) {
      expect(env[name]).toMatch(new RegExp(`^\\$\\{${name}:\\?`));
    }
    expect(() => envOf('api')).not.toThrow();
    const { UPLOAD_SIGNING_KEY: _dropped, ...missing } = vars;
    expect(() => interpolateEnv(services['api']!['environment'], missing)).toThrow(
      'UPLOAD_SIGNING_KEY unset',
    );
  });

  it('fronts both apps with Caddy on 443 and automatic HTTPS', () => {
    const caddy = services['caddy']!;
    expect(caddy['ports']).toEqual(expect.arrayContaining(['80:80', '443:443']));
    expect(caddy['volumes']).toContain('./Caddyfile:/etc/caddy/Caddyfile:ro');
    const caddyfile = read('infra/docker/Caddyfile');
    const auth = parseAuthConfig(envOf('auth-server'));
    const api = parseApiConfig(envOf('api'));
    expect(caddyfile).toMatch(
      new RegExp(`\\{\\$AUTH_DOMAIN\\} \\{\\s+reverse_proxy auth-server:${auth.port}\\s+\\}`),
    );
    expect(caddyfile).toMatch(
      new RegExp(`\\{\\$API_DOMAIN\\} \\{\\s+reverse_proxy api:${api.port}\\s+\\}`),
    );
    expect(interpolate(caddy['environment']['AUTH_DOMAIN'], vars)).toBe(new URL(auth.issuer).host);
  });

  it('protects Redis with a password and keeps uploads in the MinIO bucket', () => {
    const redis = services['redis']!;
    expect(redis['command'].join(' ')).toContain('--requirepass "$$REDIS_PASSWORD"');
    expect(redis['healthcheck']['test'].join(' ')).toContain('-a "$$REDIS_PASSWORD"');
    expect(envOf('api')['REDIS_URL']).toBe(`redis://:${vars['REDIS_PASSWORD']}@redis:6379`);
    expect(envOf('auth-server')['DATABASE_URL']).toBe(
      `postgres://portcullis:${vars['POSTGRES_PASSWORD']}@postgres:5432/portcullis`,
    );
    const api = parseApiConfig(envOf('api'));
    expect(api.uploads.store).toBe('s3');
    expect(api.uploads.s3!.endpoint).toBe('http://minio:9000');
    expect(services['minio-bucket']!['entrypoint'].join(' ')).toContain(
      `local/${api.uploads.s3!.bucket}`,
    );
    expect(api.uploads.s3!.credentials!.secretAccessKey).toBe(vars['MINIO_ROOT_PASSWORD']);
  });

  it('has a healthcheck on every service, pinned images and volumes for its state', () => {
    expectHealthchecksAndPinnedImages(services);
    expect(interpolate(services['api']!['image'], {})).toMatch(PINNED);
    for (const [service, volume] of [
      ['postgres', 'postgres-data'],
      ['redis', 'redis-data'],
      ['minio', 'minio-data'],
      ['caddy', 'caddy-data'],
    ] as const) {
      expect(services[service]!['volumes'].join(' ')).toContain(`${volume}:`);
      expect(Object.keys(volumes)).toContain(volume);
    }
  });
});

describe('infra/k8s', () => {
  const files = readdirSync(path.join(root, 'infra/k8s')).filter((f) => f.endsWith('.yaml'));
  const docs = files.flatMap((f) =>
    parseAllDocuments(read(`infra/k8s/${f}`)).map((d) => d.toJS() as Doc),
  );
  const byKind = (kind: string) => docs.filter((d) => d['kind'] === kind);
  const named = (kind: string, name: string) =>
    byKind(kind).find((d) => d['metadata']['name'] === name)!;
  const configMap = byKind('ConfigMap')[0]!['data'] as Env;
  const workloads = [...byKind('Deployment'), ...byKind('StatefulSet')];
  // The Secret `generate-secrets.sh k8s` makes, as the cluster would hold it.
  const secretDoc = parse(generate('k8s')) as Doc;
  const secret = secretDoc['stringData'] as Env;

  /** What a container's environment is: its envFrom sources, then its own env. */
  function envOf(container: Doc): Env {
    const env: Env = {};
    for (const from of container['envFrom'] ?? []) {
      if (from['configMapRef']) Object.assign(env, configMap);
      if (from['secretRef']?.['name'] === secretDoc['metadata']['name']) Object.assign(env, secret);
    }
    for (const { name, value } of container['env'] ?? [])
      if (value !== undefined) env[name] = value;
    return env;
  }

  it('commits no Secret with values: generate-secrets.sh makes it', () => {
    expect(byKind('Secret')).toEqual([]);
    expect(docs.map((d) => JSON.stringify(d)).join('\n')).not.toMatch(/CHANGE_ME/i);
    expect(secretDoc).toMatchObject({ kind: 'Secret', metadata: { name: 'portcullis-secrets' } });
    // Every secret key a manifest reads is one the script writes.
    for (const workload of workloads) {
      for (const container of workload['spec']['template']['spec']['containers']) {
        for (const { valueFrom } of container['env'] ?? []) {
          const ref = valueFrom?.['secretKeyRef'];
          if (ref) expect(Object.keys(secret)).toContain(ref['key']);
        }
      }
    }
  });

  it('has probes and resources on every workload container, and pinned images', () => {
    expect(workloads.map((w) => w['metadata']['name']).sort()).toEqual([
      'portcullis-api',
      'portcullis-auth-server',
      'portcullis-postgres',
      'portcullis-redis',
    ]);
    for (const workload of workloads) {
      for (const container of workload['spec']['template']['spec']['containers']) {
        const name = `${workload['metadata']['name']}/${container['name']}`;
        expect({ name, readiness: Boolean(container['readinessProbe']) }).toEqual({
          name,
          readiness: true,
        });
        expect({ name, liveness: Boolean(container['livenessProbe']) }).toEqual({
          name,
          liveness: true,
        });
        expect(container['resources']['requests']).toMatchObject({
          cpu: expect.any(String),
          memory: expect.any(String),
        });
        expect(container['resources']['limits']['memory']).toEqual(expect.any(String));
        expect(container['image']).toMatch(PINNED);
      }
    }
  });

  it('runs each app from the documented image, probing where its config listens', () => {
    for (const [name, app] of Object.entries(apps)) {
      const deployment = named('Deployment', `portcullis-${name}`);
      const pod = deployment['spec']['template']['spec'];
      const container = pod['containers'][0];
      expect(pod['securityContext']['runAsNonRoot']).toBe(true);
      expect(container['image']).toMatch(/^ghcr\.io\/your-org\/portcullis:\d+\.\d+\.\d+$/);
      expect(container['command']).toEqual(['node', app.main]);
      sourceOf(app.main);
      expect(container['readinessProbe']['httpGet']['path']).toBe('/readyz');
      expect(container['livenessProbe']['httpGet']['path']).toBe('/healthz');
      // The generated secrets pass the production checks (none is a placeholder).
      const port = app.port(envOf(container));
      expect(container['ports'][0]['containerPort']).toBe(port);
      const service = named('Service', `portcullis-${name}`);
      expect(service['spec']['ports'][0]).toMatchObject({ port, targetPort: 'http' });
      expect(
        named('HorizontalPodAutoscaler', `portcullis-${name}`)['spec']['scaleTargetRef']['name'],
      ).toBe(`portcullis-${name}`);
      // A PodDisruptionBudget keeps one pod through a drain.
      const pdb = named('PodDisruptionBudget', `portcullis-${name}`);
      expect(pdb['spec']['minAvailable']).toBe(1);
      expect(pdb['spec']['selector']['matchLabels']).toEqual(
        deployment['spec']['selector']['matchLabels'],
      );
    }
    expect(
      new Set(
        byKind('Deployment')
          .filter((d) => d['metadata']['name'] !== 'portcullis-redis')
          .map((d) => d['spec']['template']['spec']['containers'][0]['image']),
      ).size,
    ).toBe(1);
  });

  it('keeps uploads in a shared bucket when the API runs more than one pod', () => {
    const deployment = named('Deployment', 'portcullis-api');
    const hpa = named('HorizontalPodAutoscaler', 'portcullis-api');
    const instances = Math.max(deployment['spec']['replicas'], hpa['spec']['maxReplicas']);
    expect(instances).toBeGreaterThan(1);
    const config = parseApiConfig(envOf(deployment['spec']['template']['spec']['containers'][0]));
    expect(config.uploads.store).toBe('s3');
    expect(config.uploads.s3!.bucket).toEqual(expect.any(String));
  });

  it('reaches PostgreSQL and Redis through their Services, Redis with its password', () => {
    const auth = parseAuthConfig(
      envOf(
        named('Deployment', 'portcullis-auth-server')['spec']['template']['spec']['containers'][0],
      ),
    );
    const db = new URL(auth.databaseUrl!);
    expect(named('Service', db.hostname)['spec']['ports'][0]['port']).toBe(Number(db.port));
    const redis = new URL(auth.redisUrl!);
    expect(redis.password).toBe(secret['REDIS_PASSWORD']);
    expect(named('Service', redis.hostname)['spec']['ports'][0]['port']).toBe(Number(redis.port));
    const redisPod = named('Deployment', 'portcullis-redis')['spec']['template']['spec'];
    expect(redisPod['containers'][0]['command'].join(' ')).toContain(
      '--requirepass "$REDIS_PASSWORD"',
    );
  });

  it('serves both host names over TLS through cert-manager, never the admin API', () => {
    const ingress = byKind('Ingress')[0]!;
    expect(ingress['metadata']['annotations']['cert-manager.io/cluster-issuer']).toEqual(
      expect.any(String),
    );
    const hosts = [new URL(configMap['ISSUER']!).host, new URL(configMap['API_AUDIENCE']!).host];
    expect(ingress['spec']['tls'][0]['hosts'].sort()).toEqual(hosts.sort());
    expect(configMap['PUBLIC_URL']).toBe(configMap['API_AUDIENCE']);
    for (const rule of ingress['spec']['rules']) {
      for (const p of rule['http']['paths']) {
        const backend = p['backend']['service'];
        const service = named('Service', backend['name']);
        expect(service['spec']['ports'].map((x: Doc) => x['name'])).toContain(
          backend['port']['name'],
        );
        expect(service['spec']['ports'][0]['port']).not.toBe(
          parseAuthConfig({ ...configMap, ...secret }).adminPort,
        );
      }
    }
  });

  it('sets only variables the README documents', () => {
    const readme = read('README.md');
    const set = [
      ...Object.keys(configMap),
      ...Object.keys(secret),
      ...workloads.flatMap((w) =>
        w['spec']['template']['spec']['containers'].flatMap((c: Doc) =>
          (c['env'] ?? []).map((e: Doc) => e['name'] as string),
        ),
      ),
    ].filter(
      (name) => !name.startsWith('POSTGRES_') && name !== 'PGDATA' && name !== 'REDIS_PASSWORD',
    );
    for (const name of new Set(set)) expect(readme).toContain(`\`${name}\``);
  });
});

describe('README', () => {
  it('documents every variable either app reads', () => {
    const readme = read('README.md');
    const configs = [
      'apps/api/src/config.ts',
      'apps/auth-server/src/kernel/config.ts',
      'apps/auth-server/src/kernel/agent-settings.ts',
      'apps/auth-server/src/kernel/resource-settings.ts',
      'apps/web/src/config.ts',
      // The variables the apps share (TRUST_PROXY, WEB_PORT, DATABASE_URL, REDIS_URL, …).
      'packages/observability/src/environment.ts',
      'packages/db/src/settings.ts',
    ]
      .map(read)
      .join('\n');
    const names = new Set(
      Array.from(configs.matchAll(/^\s+([A-Z][A-Z0-9_]{2,}):/gm), (m) => m[1]!),
    );
    expect(names.size).toBeGreaterThan(20);
    const missing = [...names].filter((name) => !readme.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });

  it('shows the commands of the deployment files as they are', () => {
    const readme = read('README.md');
    const deploying = readme.slice(readme.indexOf('## Deploying'));
    expect(deploying).toContain('docker compose -f infra/docker/compose.yaml up --build');
    expect(deploying).toContain('infra/scripts/generate-secrets.sh compose');
    expect(deploying).toContain(
      'docker compose -f infra/docker/compose.production.yaml up -d --build',
    );
    expect(deploying).toContain('infra/scripts/generate-secrets.sh k8s | kubectl create -f -');
    expect(deploying).toContain('kubectl apply -f infra/k8s/');
    // The script exists and refuses a call without its arguments (exit 64, usage).
    const usage = spawnSync('sh', [GENERATE], { encoding: 'utf8' });
    expect(usage.status).toBe(64);
    expect(usage.stderr).toContain('usage:');
  });
});
