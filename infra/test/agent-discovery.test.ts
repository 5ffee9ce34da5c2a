/**
 * An agent that knows nothing but the API's URL (README "Protected-resource metadata",
 * "Dynamic client registration", "Client ID Metadata Documents"), written with the MCP
 * TypeScript SDK's OAuth client, a third-party library: it calls the API, reads the 401's
 * `resource_metadata` and `scope`, follows it to the API's RFC 9728 metadata and on to the auth
 * server's RFC 8414 metadata, registers (dynamic registration, or a client metadata document the test
 * serves over https on loopback), signs a user in through the real pages with Authorization
 * Code + PKCE and `resource`, and calls the API with the token.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  auth as mcpAuth,
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
  type OAuthClientProvider,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { parseApiConfig, startApiServer, type RunningApiServer } from '@portcullis/api';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  browser,
  browserLogin,
  createUser,
  freePort,
  startDocumentServer,
  type DocumentServer,
} from '@portcullis/testing';
import { pino } from 'pino';

// The SDK binds the metadata's `resource` to the URL it was given: API_AUDIENCE is the API's URL.
let apiUrl: string;
let auth: TestAuthServer;
let api: RunningApiServer;
let documents: DocumentServer;
let dataDir: string;
const REDIRECT = 'http://127.0.0.1:33418/callback';

beforeAll(async () => {
  const port = await freePort();
  apiUrl = `http://127.0.0.1:${port}`;
  dataDir = await mkdtemp(path.join(tmpdir(), 'portcullis-agent-api-'));
  documents = await startDocumentServer();
  const logger = pino({ level: 'silent' });
  auth = await startTestAuthServer({ API_AUDIENCE: apiUrl, REGISTRATION: 'open' }, { logger });
  api = await startApiServer(
    parseApiConfig({
      NODE_ENV: 'test',
      API_PORT: String(port),
      ISSUER: auth.issuer,
      API_AUDIENCE: apiUrl,
      DATA_DIR: dataDir,
      // A password sign-in is enough here: step-up is not what this test is about.
      STEP_UP: 'off',
    }),
    { db: auth.database.db, logger },
  );
}, 60_000);

afterAll(async () => {
  await api?.close();
  await auth?.close();
  await documents?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** An OAuthClientProvider kept in memory; the "browser" is the cookie-jar client. */
class AgentProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  constructor(readonly clientMetadataUrl?: string) {}
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test Agent',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** From the API's URL alone: the 401, its metadata URL, and both metadata documents. */
async function discoverFromApi() {
  const refused = await fetch(`${apiUrl}/orders`);
  expect(refused.status).toBe(401);
  const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(refused);
  expect(resourceMetadataUrl?.href).toBe(`${apiUrl}/.well-known/oauth-protected-resource`);
  // RFC 6750 §3: the route's permission, what the SDK asks for before scopes_supported (SEP-835).
  expect(scope).toBe('orders:read');
  const resource = await discoverOAuthProtectedResourceMetadata(apiUrl, { resourceMetadataUrl });
  const server = await discoverAuthorizationServerMetadata(resource.authorization_servers![0]!);
  if (!server) throw new Error('no authorization server metadata');
  return { resourceMetadataUrl: resourceMetadataUrl!, scope: scope!, resource, server };
}

/** The SDK's auth(): discovery, registration, PKCE; the user signs in on the real pages. */
async function agentSignIn(agent: AgentProvider, resourceMetadataUrl: URL, scope: string) {
  const user = await createUser(auth, ['editor']);
  // As the SDK's transports do with a 401: the challenge's scope goes to auth().
  const options = { serverUrl: apiUrl, resourceMetadataUrl, scope };
  expect(await mcpAuth(agent, options)).toBe('REDIRECT');
  const authorizationUrl = agent.authorizationUrl!;
  expect(authorizationUrl.searchParams.get('resource')).toBe(apiUrl);
  // Only what the route needs, not every scope of scopes_supported.
  expect(authorizationUrl.searchParams.get('scope')).toBe('orders:read');
  expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
  const pages: string[] = [];
  const callback = await browserLogin(authorizationUrl.href, user, {
    b: browser(),
    stopAt: REDIRECT,
    pages,
  });
  const code = callback.searchParams.get('code')!;
  expect(await mcpAuth(agent, { ...options, authorizationCode: code })).toBe('AUTHORIZED');
  return { user, pages };
}

/** The token reads the user's orders; a write needs a scope it was not given, and says which. */
async function callApi(agent: AgentProvider) {
  const headers = { authorization: `Bearer ${agent.saved!.access_token}` };
  const listed = await fetch(`${apiUrl}/orders`, { headers });
  expect(listed.status).toBe(200);
  const created = await fetch(`${apiUrl}/orders`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ customer: 'agent', amount: 4200, currency: 'EUR' }),
  });
  expect(created.status).toBe(403);
  expect(extractWWWAuthenticateParams(created)).toMatchObject({
    error: 'insufficient_scope',
    scope: 'orders:write',
  });
}

describe('an agent starting from the API URL', () => {
  test('the metadata it finds has every member the RFCs require', async () => {
    const { resource, server } = await discoverFromApi();
    // RFC 9728 §2 and §3.3: `resource` is required and equals the URL the metadata is for.
    expect(resource.resource).toBe(apiUrl);
    expect(resource.authorization_servers).toEqual([auth.issuer]);
    expect(resource.bearer_methods_supported).toEqual(['header']);
    expect(resource.scopes_supported).toContain('api');
    // RFC 8414 §2 required members, §3.3 the issuer equal to the URL it was fetched for.
    expect(server.issuer).toBe(auth.issuer);
    for (const member of ['authorization_endpoint', 'token_endpoint'] as const) {
      expect(String(server[member])).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    }
    expect(server.response_types_supported).toEqual(['code']);
    expect(server.code_challenge_methods_supported).toEqual(['S256']);
    expect(server.registration_endpoint).toBe(`${auth.issuer}/register`);
    expect(server['client_id_metadata_document_supported']).toBe(true);
    // RFC 8414's well-known URL and OpenID Connect's serve the same document.
    const rfc8414 = await (
      await fetch(`${auth.issuer}/.well-known/oauth-authorization-server`)
    ).json();
    const oidc = await (await fetch(`${auth.issuer}/.well-known/openid-configuration`)).json();
    expect(rfc8414).toEqual(oidc);
  });

  test('registers dynamically, signs a user in with PKCE and resource, and calls the API', async () => {
    const { resourceMetadataUrl, scope } = await discoverFromApi();
    const agent = new AgentProvider();
    await agentSignIn(agent, resourceMetadataUrl, scope);
    expect(agent.client).toMatchObject({ client_name: 'Test Agent' });
    await callApi(agent);
    const listed = await auth.admin('GET', '/admin/clients');
    expect(listed.body.items).toContainEqual(
      expect.objectContaining({ client_id: agent.client!.client_id, dynamic_registration: true }),
    );
  });

  test('identifies itself by a client metadata document instead, shown by its host at consent', async () => {
    const { resourceMetadataUrl, scope } = await discoverFromApi();
    const clientId = `${documents.origin}/agent/client.json`;
    const agent = new AgentProvider(clientId);
    documents.serve('/agent/client.json', { client_id: clientId, ...agent.clientMetadata });
    const { pages } = await agentSignIn(agent, resourceMetadataUrl, scope);
    expect(agent.client?.client_id).toBe(clientId);
    const consent = pages.find((page) => page.includes('asks for'))!;
    expect(consent).toContain(`<strong>${new URL(documents.origin).host}</strong>`);
    await callApi(agent);
  });
});
