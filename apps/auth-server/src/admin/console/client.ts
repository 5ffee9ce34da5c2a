import type { ClientMetadata } from 'oidc-provider';

/** The admin console (docs/console.md): a first-party client of this server, served at CONSOLE_PATH. */
export const CONSOLE_CLIENT_ID = 'portcullis-console';
export const CONSOLE_PATH = '/console';
export const CONSOLE_CALLBACK = `${CONSOLE_PATH}/callback`;
/** The role an administrator holds: the console and the admin API's console tokens require it. */
export const ADMIN_ROLE = 'admin';

/** Public (PKCE) because the code is exchanged by this same server; every sign-in needs a second factor. */
export function consoleClientMetadata(issuer: string): ClientMetadata {
  return {
    client_id: CONSOLE_CLIENT_ID,
    client_name: 'Portcullis console',
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code'],
    response_types: ['code'],
    redirect_uris: [`${issuer}${CONSOLE_CALLBACK}`],
    post_logout_redirect_uris: [`${issuer}${CONSOLE_PATH}`],
    first_party: true,
    require_mfa: true,
  };
}
