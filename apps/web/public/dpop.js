// Generated from packages/client/src/dpop.ts by pnpm --filter @portcullis/web generate.

// ../../packages/client/src/encoding.ts
function base64url(bytes) {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

// ../../packages/client/src/dpop.ts
var ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256' };
var SIGNATURE = { name: 'ECDSA', hash: 'SHA-256' };
var encoder = new TextEncoder();
var encodeJson = (value) => base64url(encoder.encode(JSON.stringify(value)));
async function sha256(text) {
  return base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text))));
}
async function jwkThumbprint(jwk) {
  return sha256(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }));
}
async function publicJwkOf(publicKey) {
  const jwk = await crypto.subtle.exportKey('jwk', publicKey);
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || !jwk.x || !jwk.y) {
    throw new TypeError('a DPoP key must be a P-256 ECDSA key pair');
  }
  return { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y };
}
function targetUri(url) {
  const target = new URL(url);
  target.search = '';
  target.hash = '';
  return target.href;
}
async function createDpopKey(options = {}) {
  const keyPair =
    options.keyPair ?? (await crypto.subtle.generateKey(ALGORITHM, false, ['sign', 'verify']));
  const publicJwk = await publicJwkOf(keyPair.publicKey);
  const thumbprint = await jwkThumbprint(publicJwk);
  const header = encodeJson({ typ: 'dpop+jwt', alg: 'ES256', jwk: publicJwk });
  const nonces = /* @__PURE__ */ new Map();
  return {
    keyPair,
    publicJwk,
    thumbprint,
    async proof(method, url, proofOptions = {}) {
      const nonce = proofOptions.nonce ?? nonces.get(new URL(url).origin);
      const payload = encodeJson({
        jti: base64url(crypto.getRandomValues(new Uint8Array(16))),
        htm: method.toUpperCase(),
        htu: targetUri(url),
        iat: Math.floor(Date.now() / 1e3),
        ...(proofOptions.accessToken !== void 0
          ? { ath: await sha256(proofOptions.accessToken) }
          : {}),
        ...(nonce !== void 0 ? { nonce } : {}),
      });
      const input = `${header}.${payload}`;
      const signature = await crypto.subtle.sign(
        SIGNATURE,
        keyPair.privateKey,
        encoder.encode(input),
      );
      return `${input}.${base64url(new Uint8Array(signature))}`;
    },
    updateNonce(url, headers) {
      const nonce = headers.get('DPoP-Nonce');
      if (!nonce) return false;
      const origin = new URL(url).origin;
      if (nonces.get(origin) === nonce) return false;
      nonces.set(origin, nonce);
      return true;
    },
  };
}
function isUseDpopNonceChallenge(headers) {
  const challenge = headers.get('WWW-Authenticate') ?? '';
  return /(^|[\s,])DPoP\b[^]*\berror="use_dpop_nonce"/i.test(challenge);
}
export { createDpopKey, isUseDpopNonceChallenge, jwkThumbprint };
