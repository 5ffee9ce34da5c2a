import { parseApiConfig, type ApiConfig } from '../config.js';
import type { Authenticate } from '../middleware/authenticate.js';
import type { RouteDeps } from '../routes/deps.js';
import { createApiRoutes } from '../routes/index.js';
import { buildOpenApiDocument } from './document.js';

/** Stands in for every dependency: reading it works (routes destructure at mount), calling it throws. */
function unavailable(name: string): unknown {
  return new Proxy(function unavailableDependency() {}, {
    get: (_target, key) => unavailable(`${name}.${String(key)}`),
    apply: () => {
      throw new Error(`${name}() is unavailable: the routes were mounted only to describe them`);
    },
  });
}

/**
 * The document GET /openapi.json serves, built in-process without a database or a
 * listening server: the routes are mounted on inert dependencies (their handlers never
 * run) so they register their descriptions. Default config: every variable unset, so
 * the result does not depend on the environment. Used to generate packages/client's types.
 */
export function openApiDocument(config: ApiConfig = parseApiConfig({})): object {
  const inert = () => {
    throw new Error('openApiDocument: routes mounted only to describe them');
  };
  const authenticate: Authenticate = Object.assign(inert, { requiring: () => inert });
  const api = createApiRoutes(config, unavailable('deps') as RouteDeps, authenticate);
  return buildOpenApiDocument(api.registry, config);
}
