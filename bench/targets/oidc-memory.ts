// The reference point for token issuance: oidc-provider with its in-memory adapter, a
// static client and the same token settings as Portcullis (client credentials, RFC 8707
// resource, RFC 9068 JWT access tokens, the same algorithm, roles in the token). With
// BENCH_CHAINS it also mints that many refresh tokens of a public client, as a sign-in
// would leave them (openid offline_access api, rotated on every use).
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { type KoaContextWithOIDC } from 'oidc-provider';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';

const alg = (process.env['SIGNING_ALG'] ?? 'RS256') as 'RS256' | 'ES256';
const audience = 'http://localhost:3000';
const { privateKey } = await generateKeyPair(alg, { extractable: true });
const jwk = { ...(await exportJWK(privateKey)), kid: 'bench', alg, use: 'sig' };

const server = createServer();
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const provider = new Provider(issuer, {
  clients: [
    {
      client_id: 'bench',
      client_secret: 'bench-secret-bench-secret-bench-secret',
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      roles: ['admin'],
      id_token_signed_response_alg: alg,
    } as never,
    {
      client_id: 'bench-spa',
      grant_types: ['authorization_code', 'refresh_token'],
      redirect_uris: ['http://127.0.0.1/callback'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      roles: [],
      id_token_signed_response_alg: alg,
    } as never,
  ],
  extraClientMetadata: { properties: ['roles'] },
  jwks: { keys: [jwk as never] },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: async () => audience,
      useGrantedResource: async () => true,
      getResourceServerInfo: async () => ({
        scope: 'api',
        audience,
        accessTokenFormat: 'jwt',
        accessTokenTTL: 900,
        jwt: { sign: { alg } },
      }),
    },
  },
  rotateRefreshToken: () => true,
  findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
  extraTokenClaims: async (ctx: KoaContextWithOIDC) => ({
    roles: ctx.oidc.client?.metadata()['roles'] ?? [],
  }),
});
server.on('request', provider.callback());

const refreshTokens: string[] = [];
const spa = (await provider.Client.find('bench-spa'))!;
for (let i = 0; i < Number(process.env['BENCH_CHAINS'] ?? 0); i++) {
  const grant = new provider.Grant({ accountId: `bench-user-${i}`, clientId: 'bench-spa' });
  grant.addOIDCScope('openid offline_access');
  grant.addResourceScope(audience, 'api');
  const grantId = await grant.save();
  const token = new provider.RefreshToken({
    accountId: `bench-user-${i}`,
    client: spa,
    grantId,
    gty: 'authorization_code',
    scope: 'openid offline_access api',
    resource: audience,
    authTime: Math.floor(Date.now() / 1000),
  });
  refreshTokens.push(await token.save());
}
console.log(
  JSON.stringify({
    url: issuer,
    clientId: 'bench',
    clientSecret: 'bench-secret-bench-secret-bench-secret',
    spaClientId: 'bench-spa',
    refreshTokens,
  }),
);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
