/** oidc-provider's own endpoints; what Portcullis changes in them: oauth/extensions.ts. */
export const PROVIDER_ROUTES = {
  authorization: '/authorize',
  jwks: '/.well-known/jwks.json',
  token: '/token',
  device_authorization: '/device/auth',
  code_verification: '/device',
  revocation: '/token/revocation',
  introspection: '/token/introspection',
  userinfo: '/me',
  end_session: '/session/end',
  registration: '/register',
};

/** Every path of oidc-provider here: PROVIDER_ROUTES and the ones it derives or fixes. */
export const providerPaths = (): string[] => [
  ...Object.values(PROVIDER_ROUTES),
  '/.well-known/openid-configuration',
  '/.well-known/oauth-authorization-server',
  '/request',
  `${PROVIDER_ROUTES.end_session}/confirm`,
  `${PROVIDER_ROUTES.code_verification}/:uid`,
  `${PROVIDER_ROUTES.registration}/:clientId`,
];
