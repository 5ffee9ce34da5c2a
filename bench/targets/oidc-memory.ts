// The reference point for token issuance: oidc-provider with its in-memory adapter, a
// static client and the same token settings as Portcullis (client credentials, RFC 8707
// resource, RFC 9068 JWT access tokens, the same algorithm, roles in the token).
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
  extraTokenClaims: async (ctx: KoaContextWithOIDC) => ({
    roles: ctx.oidc.client?.metadata()['roles'] ?? [],
  }),
});
server.on('request', provider.callback());
console.log(
  JSON.stringify({
    url: issuer,
    clientId: 'bench',
    clientSecret: 'bench-secret-bench-secret-bench-secret',
  }),
);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
