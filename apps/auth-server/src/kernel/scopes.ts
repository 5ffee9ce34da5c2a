/** Scopes of the ID token and /me (the provider's `scopes`); a client may also ask for API_SCOPES. */
export const OIDC_SCOPES: readonly string[] = ['openid', 'offline_access', 'profile', 'email'];
