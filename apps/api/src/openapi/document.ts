import { OpenApiGeneratorV31, type OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { API_SCOPE } from '@portcullis/claims';
import type { ApiConfig } from '../config.js';
import { Perm } from '../permissions.js';

function scopes(): Record<string, string> {
  const out: Record<string, string> = { [API_SCOPE]: 'Every permission the token’s roles grant' };
  for (const permission of Object.values(Perm))
    out[permission] = `Narrow the token to ${permission}`;
  return out;
}

/** Security schemes: how each credential (docs/api-contracts.md) is presented. */
function registerSecuritySchemes(registry: OpenAPIRegistry, config: ApiConfig): void {
  const issuer = config.issuer.replace(/\/$/, '');
  registry.registerComponent('securitySchemes', 'oauth2', {
    type: 'oauth2',
    description:
      'Access tokens from the Portcullis authorization server. Authorization code requires PKCE (S256). ' +
      `Devices use the device authorization grant (RFC 8628) at ${issuer}/device/auth, which OpenAPI cannot describe as a flow.`,
    flows: {
      authorizationCode: {
        authorizationUrl: `${issuer}/authorize`,
        tokenUrl: `${issuer}/token`,
        refreshUrl: `${issuer}/token`,
        scopes: scopes(),
      },
      clientCredentials: { tokenUrl: `${issuer}/token`, scopes: scopes() },
    },
  });
  registry.registerComponent('securitySchemes', 'bearerJwt', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'An RFC 9068 access token (typ at+jwt) whose aud is this API',
  });
  registry.registerComponent('securitySchemes', 'apiKey', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'sk_live',
    description: 'An API key: `Authorization: Bearer sk_live_<43 base64url characters>`',
  });
  registry.registerComponent('securitySchemes', 'sessionCookie', {
    type: 'apiKey',
    in: 'cookie',
    name: 'sid',
    description: 'Browser session from POST /login',
  });
}

/** Builds the OpenAPI 3.1 document from the routes registered so far. */
export function buildOpenApiDocument(registry: OpenAPIRegistry, config: ApiConfig): object {
  registerSecuritySchemes(registry, config);
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Portcullis API',
      version: '1.0.0',
      description:
        'Resource server trusting only tokens of the Portcullis authorization server. ' +
        'Errors are JSON `{ "error": <code>, "message"? }`; 422 adds `fields`; 403 is exactly `{"error":"forbidden"}`.',
    },
    servers: [{ url: config.audience }],
  });
}
