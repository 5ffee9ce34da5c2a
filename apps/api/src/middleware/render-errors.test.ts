import { describe, expect, test } from '@jest/globals';
import { ForbiddenError as ClaimsForbiddenError, TokenError } from '@portcullis/claims';
import { RateLimitedError, ValidationError } from '../errors.js';
import { toAppError } from './render-errors.js';

describe('toAppError', () => {
  test('429 carries Retry-After in whole seconds', () => {
    const error = toAppError(new RateLimitedError(1.2));
    expect(error.status).toBe(429);
    expect(error.headers).toEqual({ 'Retry-After': '2' });
    expect(error.body()).toEqual({ error: 'rate_limited', message: 'too many requests' });
  });

  test('claims errors: 403 body is exactly the code; a token failure says its fixed description, not its message', () => {
    expect(toAppError(new ClaimsForbiddenError('orders:write')).body()).toEqual({
      error: 'forbidden',
    });
    const expired = toAppError(new TokenError('token_expired', 'exp 1700000000 is past'));
    expect(expired.status).toBe(401);
    expect(expired.body()).toEqual({ error: 'invalid_token', message: 'token expired' });
    expect(expired.headers['WWW-Authenticate']).toMatch(
      /^Bearer realm="portcullis", error="invalid_token", error_description="token expired", DPoP /,
    );
    const jwks = toAppError(new TokenError('jwks_unavailable'));
    expect(jwks.status).toBe(503);
    expect(jwks.headers['Retry-After']).toBe('5');
  });

  test('library errors: unique violation 409, body-parser 413/415', () => {
    expect(toAppError(Object.assign(new Error('dup'), { code: '23505' })).status).toBe(409);
    expect(
      toAppError(Object.assign(new Error('big'), { type: 'entity.too.large', status: 413 })).status,
    ).toBe(413);
    expect(
      toAppError(Object.assign(new Error('enc'), { type: 'encoding.unsupported', status: 415 }))
        .status,
    ).toBe(415);
  });

  test('anything else is a 500 that exposes nothing', () => {
    const error = toAppError(new Error('secret detail'));
    expect(error.status).toBe(500);
    expect(error.body()).toEqual({ error: 'internal_error' });
  });

  test('422 lists fields', () => {
    expect(new ValidationError({ a: ['bad'] }).body()).toEqual({
      error: 'validation_failed',
      message: 'the request is invalid',
      fields: { a: ['bad'] },
    });
  });
});
