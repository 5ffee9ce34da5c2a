/** What the SPA shows of the signed-in user. */
export interface SignedInUser {
  sub: string;
  email?: string;
  name?: string;
}

/** ID-token claims; OIDC Core §3.1.3.7 (docs/security.md#the-browser-demos-cookies). */
export function idTokenUser(
  idToken: unknown,
  expected: { issuer: string; clientId: string; nonce?: string },
): SignedInUser | undefined {
  if (typeof idToken !== 'string') return undefined;
  const payload = idToken.split('.')[1];
  if (!payload) return undefined;
  let claims: Record<string, unknown>;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<
      string,
      unknown
    >;
  } catch {
    return undefined;
  }
  const aud = Array.isArray(claims['aud']) ? claims['aud'] : [claims['aud']];
  if (claims['iss'] !== expected.issuer || !aud.includes(expected.clientId)) return undefined;
  if (expected.nonce !== undefined && claims['nonce'] !== expected.nonce) return undefined;
  if (typeof claims['sub'] !== 'string') return undefined;
  const user: SignedInUser = { sub: claims['sub'] };
  if (typeof claims['email'] === 'string') user.email = claims['email'];
  if (typeof claims['name'] === 'string') user.name = claims['name'];
  return user;
}
