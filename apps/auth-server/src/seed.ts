import type { AccountsRepo } from '@portcullis/accounts';
import { API_SCOPE } from '@portcullis/claims';
import type { ClientsRepo } from './data/clients-repo.js';
import { registerClient } from './admin/api/register-client.js';
import { newClientSchema } from './admin/api/schemas.js';
import type { ProviderHost } from './oauth/provider-host.js';
import { DEMO_CLI_CLIENT_ID, DEMO_CLI_REDIRECT_URI } from './admin/cli/authorize/config.js';

/** Fixed, documented demo passwords: the seed runs only outside production. */
export const DEMO_USERS = [
  { email: 'admin@example.com', password: 'portcullis-admin', roles: ['admin'], name: 'Ada Admin' },
  {
    email: 'editor@example.com',
    password: 'portcullis-editor',
    roles: ['editor'],
    name: 'Eddie Editor',
  },
  {
    email: 'viewer@example.com',
    password: 'portcullis-viewer',
    roles: ['viewer'],
    name: 'Vera Viewer',
  },
] as const;

export interface SeedDeps {
  accounts: AccountsRepo;
  clients: ClientsRepo;
  host: ProviderHost;
  /** The browser demo's origin: demo-spa's redirect URI is `${webOrigin}/callback`. */
  webOrigin: string;
  print: (text: string) => void;
}

/** Demo data on first start outside production; secrets printed once, never stored in clear. */
export async function seedDemo(deps: SeedDeps): Promise<boolean> {
  if ((await deps.accounts.count()) > 0) return false;
  for (const user of DEMO_USERS) await deps.accounts.create({ ...user, roles: [...user.roles] });

  const existing = new Set((await deps.clients.list()).map((c) => c.metadata.client_id));
  const register = async (input: unknown) => {
    const parsed = newClientSchema.parse(input);
    if (existing.has(parsed.client_id!)) return undefined;
    return registerClient(deps.host, deps.clients, parsed);
  };
  await register({
    client_id: 'demo-spa',
    client_name: 'Portcullis demo SPA',
    token_endpoint_auth_method: 'none',
    redirect_uris: [`${deps.webOrigin}/callback`],
    post_logout_redirect_uris: [`${deps.webOrigin}/`],
    grant_types: ['authorization_code', 'refresh_token'],
  });
  const service = await register({
    client_id: 'demo-service',
    client_name: 'Portcullis demo service',
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: ['client_credentials'],
    roles: ['editor'],
    // Without `scope` in the request it gets its role's permissions (README "Client credentials").
    scope: API_SCOPE,
  });
  // RFC 8252: a loopback redirect on any port, so nothing else listening can catch its code.
  await register({
    client_id: DEMO_CLI_CLIENT_ID,
    client_name: 'Portcullis command line',
    application_type: 'native',
    token_endpoint_auth_method: 'none',
    redirect_uris: [DEMO_CLI_REDIRECT_URI],
    grant_types: ['authorization_code', 'refresh_token'],
  });
  await register({
    client_id: 'demo-device',
    client_name: 'Portcullis demo device',
    token_endpoint_auth_method: 'none',
    grant_types: ['device_code', 'refresh_token'],
  });

  const lines = [
    '',
    '================ Portcullis demo data (shown once) ================',
    ...DEMO_USERS.map(
      (u) => `  user    ${u.email.padEnd(20)} password ${u.password}  roles ${u.roles.join(',')}`,
    ),
    `  client  demo-spa      public, PKCE, redirect ${deps.webOrigin}/callback`,
    `  client  demo-service  confidential, client_credentials, roles editor, scope ${API_SCOPE}${
      service?.clientSecret ? `\n          client_secret ${service.clientSecret}` : ''
    }`,
    `  client  ${DEMO_CLI_CLIENT_ID}      public, native, loopback redirect: npm run authorize`,
    '  client  demo-device   public, device_code',
    '===================================================================',
    '',
  ];
  deps.print(lines.join('\n'));
  return true;
}
