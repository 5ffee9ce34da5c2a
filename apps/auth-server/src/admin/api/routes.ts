import type Router from '@koa/router';
import type { AccountsRepo } from '@portcullis/accounts';
import { CLIENT_SUBJECT_PREFIX } from '@portcullis/claims';
import type { ResourceStore, RoleStore, SharedCatalog, SharedDenyList } from '@portcullis/db';
import type { AuditRepo } from '../../data/audit-repo.js';
import type { ClientMetadata, ClientRecord, ClientsRepo } from '../../data/clients-repo.js';
import type { SigningKeysRepo } from '../../data/signing-keys-repo.js';
import type { UserSessionsRepo } from '../../data/user-sessions-repo.js';
import type { MfaCore } from '../../identity/mfa/index.js';
import { keyState, type KeyManager } from '../../oauth/keys.js';
import { createLogoutEverywhere } from '../../oauth/subject-logout.js';
import type { AgentClientSettings } from '../../kernel/agent-settings.js';
import type { ProviderHost } from '../../oauth/provider-host.js';
import { AdminError } from './errors.js';
import { parse, userView } from './parse.js';
import { parseWithRoles } from './role-routes.js';
import type { ForceResetDeps } from './force-reset-routes.js';
import {
  publicMetadata,
  registerClient,
  rotateClientSecret,
  updateClient,
} from './register-client.js';
import {
  auditQuerySchema,
  clientListQuerySchema,
  clientPatchSchema,
  newClientSchema,
  newUserSchema,
  rotateKeySchema,
  userListQuerySchema,
} from './schemas.js';
import type { EndCredentials } from '../../identity/self-service/end-credentials.js';

export interface AdminDeps {
  adminToken: string;
  host: ProviderHost;
  accounts: AccountsRepo;
  clients: ClientsRepo;
  audit: AuditRepo;
  signingKeys: SigningKeysRepo;
  keyManager: KeyManager;
  defaultAlg: 'RS256' | 'ES256';
  /** Production: a client's jwks_uri must be https (README "private_key_jwt"). */
  httpsJwksUriOnly?: boolean;
  /** Milliseconds clock of key states; default Date.now. */
  now?: () => number;
  /** Second factors: GET/DELETE /admin/users/:id/factors (factor-routes.ts). */
  mfa: MfaCore;
  denyList: Pick<SharedDenyList, 'denySubject'>;
  /** What disabling, a reset, a factor removal, ending all sessions end (identity/self-service/end-credentials.ts). */
  endCredentials: EndCredentials;
  /** POST /admin/users/:id/password-reset (force-reset-routes.ts); absent: no such route. */
  forceReset?: Omit<ForceResetDeps, 'accounts' | 'audit' | 'endCredentials'>;
  /** GET/DELETE /admin/users/:id/sessions (session-routes.ts). */
  userSessions: UserSessionsRepo;
  /** REGISTRATION*: POST /admin/registration-tokens (registration-routes.ts). */
  registration?: AgentClientSettings['registration'] | undefined;
  /** POST /admin/users/:id/verification: mails a new link (identity/self-service/signup-mail.ts). */
  resendVerification?: ((userId: string) => Promise<'sent' | 'verified' | 'not_found'>) | undefined;
  /** The `roles` table (role-routes.ts): users and clients name only its roles. */
  roles: RoleStore;
  /** SIGNUP_ROLES and REGISTRATION_ROLES: such a role is not deleted. */
  configuredRoles?: readonly string[] | undefined;
  /** Registered APIs and their permissions (resource-routes.ts). */
  resources: ResourceStore;
  /** Synced after each change to resources, permissions or roles: this instance sees it at once. */
  catalog: SharedCatalog;
  /** API_AUDIENCE: the built-in resource's identifier. */
  apiAudience: string;
}

const rolesOf = (metadata: ClientMetadata | undefined): string[] =>
  Array.isArray(metadata?.['roles']) ? (metadata['roles'] as string[]) : [];

export function adminRoutes(router: Router, deps: AdminDeps): void {
  const now = deps.now ?? Date.now;
  const logoutEverywhere = createLogoutEverywhere(deps.denyList);
  router.post('/admin/clients', async function createClient(ctx) {
    const input = await parseWithRoles(newClientSchema, ctx.request.body, deps.roles);
    const { metadata, clientSecret } = await registerClient(deps.host, deps.clients, input, {
      httpsJwksUriOnly: deps.httpsJwksUriOnly ?? false,
    });
    await deps.audit.record({ kind: 'client_created', clientId: metadata.client_id });
    ctx.status = 201;
    ctx.set('Location', `/admin/clients/${encodeURIComponent(metadata.client_id)}`);
    ctx.body = {
      ...publicMetadata(metadata),
      ...(clientSecret ? { client_secret: clientSecret } : {}),
    };
  });

  const clientView = (c: ClientRecord) => ({
    ...publicMetadata(c.metadata),
    created_at: c.createdAt,
  });

  router.get('/admin/clients', async function listClients(ctx) {
    const { q } = parse(clientListQuerySchema, ctx.query);
    const needle = q?.toLowerCase();
    const matches = (c: ClientRecord) =>
      [c.metadata.client_id, c.metadata.client_name].some(
        (s) => typeof s === 'string' && s.toLowerCase().includes(needle!),
      );
    const items = await deps.clients.list();
    ctx.body = { items: (needle ? items.filter(matches) : items).map(clientView) };
  });

  router.get('/admin/clients/:id', async function getClient(ctx) {
    const client = await deps.clients.get(ctx.params['id']!);
    if (!client) throw new AdminError('not_found', 'no such client');
    ctx.body = clientView(client);
  });

  router.patch('/admin/clients/:id', async function patchClient(ctx) {
    const id = ctx.params['id']!;
    const patch = await parseWithRoles(clientPatchSchema, ctx.request.body, deps.roles);
    const held = rolesOf((await deps.clients.get(id))?.metadata);
    const metadata = await updateClient(deps.host, deps.clients, id, patch);
    // Its client-credentials tokens name the roles: one taken away ends them (docs/roles.md).
    const dropped = held.some((r) => !rolesOf(metadata).includes(r));
    if (dropped) await logoutEverywhere(`${CLIENT_SUBJECT_PREFIX}${id}`);
    await deps.audit.record({
      kind: 'client_updated',
      clientId: id,
      detail: { changed: Object.keys(patch), ...(dropped ? { tokensEnded: true } : {}) },
    });
    ctx.body = publicMetadata(metadata);
  });

  router.post('/admin/clients/:id/secret', async function rotateSecret(ctx) {
    const id = ctx.params['id']!;
    const { metadata, clientSecret } = await rotateClientSecret(deps.clients, id);
    await deps.audit.record({ kind: 'client_secret_rotated', clientId: id });
    ctx.body = { ...publicMetadata(metadata), client_secret: clientSecret };
  });

  router.delete('/admin/clients/:id', async function deleteClient(ctx) {
    const id = ctx.params['id']!;
    if (!(await deps.clients.delete(id))) throw new AdminError('not_found', 'no such client');
    await deps.audit.record({ kind: 'client_deleted', clientId: id });
    ctx.status = 204;
  });

  router.post('/admin/users', async function createUser(ctx) {
    const input = await parseWithRoles(newUserSchema, ctx.request.body, deps.roles);
    const user = await deps.accounts.create(input);
    await deps.audit.record({ kind: 'user_created', subject: user.id });
    ctx.status = 201;
    ctx.body = { id: user.id, email: user.email, roles: user.roles, name: user.name };
  });

  router.get('/admin/users', async function listUsers(ctx) {
    const { limit, after, q } = parse(userListQuerySchema, ctx.query);
    const users = await deps.accounts.list({ after, limit: limit + 1, q });
    const page = users.slice(0, limit);
    ctx.body = {
      items: page.map(userView),
      nextCursor: users.length > limit ? page[page.length - 1]!.id : null,
    };
  });

  router.post('/admin/signing-keys', async function rotateSigningKey(ctx) {
    const { alg, activate } = parse(rotateKeySchema, ctx.request.body);
    const key = await deps.keyManager.rotate(alg ?? deps.defaultAlg, { activate });
    // Publishes the key on this instance now; it signs once activates_at has passed.
    await deps.host.refreshKeys();
    const detail = { kid: key.kid, alg: key.alg, activates_at: key.activatesAt, activate };
    await deps.audit.record({ kind: 'signing_key_rotated', detail });
    ctx.status = 201;
    ctx.body = {
      kid: key.kid,
      alg: key.alg,
      status: keyState({ activatesAt: key.activatesAt, retiredAt: null, expiresAt: null }, now()),
      activates_at: key.activatesAt,
    };
  });

  // Ends a key's publication now; tokens it signed stop verifying once relying parties refetch the JWKS.
  router.post('/admin/signing-keys/:kid/retire', async function retireSigningKey(ctx) {
    const kid = ctx.params['kid']!;
    const at = now();
    const key = (await deps.signingKeys.listPublic()).find((k) => k.kid === kid);
    if (!key) throw new AdminError('not_found', 'no such signing key');
    const state = keyState(key, at);
    if (state === 'active')
      throw new AdminError('conflict', 'the key signs: rotate a new key in first');
    if (state === 'expired') throw new AdminError('conflict', 'the key is no longer published');
    if (!(await deps.signingKeys.expire(kid, new Date(at)))) {
      throw new AdminError('conflict', 'the key changed meanwhile: list the keys again');
    }
    await deps.host.refreshKeys();
    await deps.audit.record({
      kind: 'signing_key_retired',
      detail: { kid, alg: key.alg, was: state },
    });
    ctx.body = { kid, alg: key.alg, status: 'expired', published_until: new Date(at) };
  });

  router.get('/admin/signing-keys', async function listSigningKeys(ctx) {
    const at = now();
    const keys = await deps.signingKeys.listPublic();
    // Access tokens and each alg's ID tokens may be signed by different keys.
    const { signs } = deps.host.keys;
    ctx.body = {
      items: keys.map((k) => ({
        kid: k.kid,
        alg: k.alg,
        status: keyState(k, at),
        signing: signs.has(k.kid),
        signs: signs.get(k.kid) ?? [],
        created_at: k.createdAt,
        activates_at: k.activatesAt,
        retired_at: k.retiredAt,
        published_until: k.expiresAt,
        public_jwk: k.publicJwk,
      })),
    };
  });

  router.get('/admin/audit', async function listAudit(ctx) {
    const { limit, client_id: clientId, ...filters } = parse(auditQuerySchema, ctx.query);
    const items = await deps.audit.list({ ...filters, clientId, limit });
    ctx.body = { items, nextBefore: items.length === limit ? items[items.length - 1]!.id : null };
  });
}
