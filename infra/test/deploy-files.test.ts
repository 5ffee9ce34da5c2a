import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments, parse } from 'yaml';
import { parseApiConfig } from '@portcullis/api';
import { parseAuthConfig } from '@portcullis/auth-server';
import { ENTRIES, HEAP_OPTIONS } from '../scripts/build.mjs';

// No container engine runs here, so the deployment files are checked statically: they
// parse, their commands name files that exist, their ports and probes match what the
// apps' own config parsing makes of the environment they set.
const root = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

type Env = Record<string, string>;
interface ComposeService {
  command?: string[];
  environment?: Env;
  ports?: string[];
}

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

// 43 base64url characters: fits every secret's format (32 bytes for KEY_ENCRYPTION_KEY).
const STAND_IN = 'A'.repeat(43);

// Interpolations like ${ISSUER:-https://…} or ${ADMIN_TOKEN:?…} resolve to a stand-in.
function interpolate(env: Env): Env {
  return Object.fromEntries(
    Object.entries(env).map(([k, v]) => [
      k,
      String(v).replace(
        /\$\{(\w+)(?::-([^}]*)|:\?[^}]*)?\}/g,
        (_m, name: string, fallback?: string) => fallback ?? STAND_IN,
      ),
    ]),
  );
}

describe('infra/docker', () => {
  it('builds a multi-stage Node 24 image that runs as a non-root user', () => {
    const dockerfile = read('infra/docker/Dockerfile');
    const froms = dockerfile.match(/^FROM .+$/gm) ?? [];
    expect(froms.length).toBeGreaterThanOrEqual(2);
    for (const from of froms) expect(from).toMatch(/^FROM node:24/);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/--frozen-lockfile/);
    expect(dockerfile).toMatch(/^RUN pnpm build$/m);
    expect(dockerfile).toMatch(/^CMD \["node", "apps\/api\/dist\/main\.js"\]$/m);
    // The heap caps the benchmark measured peak RSS with.
    expect(dockerfile).toContain(`ENV NODE_OPTIONS="${HEAP_OPTIONS}"`);
  });

  it('copies every workspace package manifest before installing from the lockfile', () => {
    const dockerfile = read('infra/docker/Dockerfile');
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

  it('compose runs each app on the port its config parses, against postgres and redis', () => {
    const compose = parse(read('infra/docker/compose.yaml')) as {
      services: Record<string, ComposeService>;
    };
    expect(Object.keys(compose.services)).toEqual(
      expect.arrayContaining(['postgres', 'redis', 'auth-server', 'api']),
    );
    for (const [name, app] of Object.entries(apps)) {
      const service = compose.services[name]!;
      expect(service.command).toEqual(['node', app.main]);
      sourceOf(app.main);
      const env = interpolate(service.environment ?? {});
      expect(env['DATABASE_URL']).toMatch(/@postgres:5432\//);
      expect(env['REDIS_URL']).toBe('redis://redis:6379');
      const port = app.port(env);
      expect(service.ports).toContain(`${port}:${port}`);
    }
  });
});

describe('infra/k8s', () => {
  // Manifests are untyped YAML; the assertions below are the schema.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  type Doc = Record<string, any>;
  const docs = ['config.yaml', 'api.yaml', 'auth-server.yaml'].flatMap((f) =>
    parseAllDocuments(read(`infra/k8s/${f}`)).map((d) => d.toJS() as Doc),
  );
  const byKind = (kind: string) => docs.filter((d) => d['kind'] === kind);
  const configMap = byKind('ConfigMap')[0]!['data'] as Env;
  const secret = byKind('Secret')[0]!['stringData'] as Env;

  it('parses into Deployments, Services and HPAs for both apps', () => {
    for (const kind of ['Deployment', 'Service', 'HorizontalPodAutoscaler']) {
      expect(
        byKind(kind)
          .map((d) => d['metadata']['name'])
          .sort(),
      ).toEqual(['portcullis-api', 'portcullis-auth-server']);
    }
  });

  it('probes /readyz and /healthz on the port the app listens on, as non-root', () => {
    for (const [name, app] of Object.entries(apps)) {
      const deployment = byKind('Deployment').find(
        (d) => d['metadata']['name'] === `portcullis-${name}`,
      )!;
      const pod = deployment['spec']['template']['spec'];
      const container = pod['containers'][0];
      expect(pod['securityContext']['runAsNonRoot']).toBe(true);
      expect(container['command']).toEqual(['node', app.main]);
      sourceOf(app.main);
      expect(container['readinessProbe']['httpGet']['path']).toBe('/readyz');
      expect(container['livenessProbe']['httpGet']['path']).toBe('/healthz');
      const secrets = Object.fromEntries(Object.keys(secret).map((k) => [k, STAND_IN]));
      const port = app.port({
        ...configMap,
        ...secret,
        ...secrets,
        DATABASE_URL: secret['DATABASE_URL']!,
        REDIS_URL: secret['REDIS_URL']!,
      });
      expect(container['ports'][0]['containerPort']).toBe(port);
      const service = byKind('Service').find(
        (d) => d['metadata']['name'] === `portcullis-${name}`,
      )!;
      expect(service['spec']['ports'][0]).toMatchObject({ port, targetPort: 'http' });
      const hpa = byKind('HorizontalPodAutoscaler').find(
        (d) => d['metadata']['name'] === `portcullis-${name}`,
      )!;
      expect(hpa['spec']['scaleTargetRef']['name']).toBe(`portcullis-${name}`);
    }
  });

  it('sets only variables the README documents', () => {
    const readme = read('README.md');
    for (const name of [...Object.keys(configMap), ...Object.keys(secret)]) {
      expect(readme).toContain(`\`${name}\``);
    }
  });
});

describe('README', () => {
  it('documents every variable either app reads', () => {
    const readme = read('README.md');
    const configs = [
      'apps/api/src/config.ts',
      'apps/auth-server/src/config.ts',
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
});
