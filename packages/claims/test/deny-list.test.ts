import { describe, expect, it } from '@jest/globals';
import { createDenyList, predatesLogout, type RevocationEntry } from '../src/index.js';
import { NOW, NOW_SEC } from './helpers.js';

const exp = NOW_SEC + 900;
const jti = (value: string, expiresAt = exp): RevocationEntry => ({
  kind: 'jti',
  value,
  before: null,
  expiresAt,
});
const grant = (value: string, expiresAt = exp): RevocationEntry => ({
  kind: 'grant',
  value,
  before: null,
  expiresAt,
});
const subject = (value: string, before: number, expiresAt = exp): RevocationEntry => ({
  kind: 'subject',
  value,
  before,
  expiresAt,
});

describe('deny list', () => {
  it('denies by jti, grant and subject-before', () => {
    const list = createDenyList({ now: () => NOW });
    list.apply([jti('jti-a'), grant('grant-a'), subject('user-a', 1000)]);
    expect(list.isDenied({ jti: 'jti-a' })).toBe(true);
    expect(list.isDenied({ jti: 'jti-b' })).toBe(false);
    expect(list.isDenied({ jti: 'x', grant_id: 'grant-a' })).toBe(true);
    expect(list.isDenied({ jti: 'x', grantId: 'grant-a' })).toBe(true);
    expect(list.isDenied({ sub: 'user-a', iat: 999 })).toBe(true);
    expect(list.isDenied({ sub: 'user-a', iat: 1000 })).toBe(false);
    expect(list.isDenied({ sub: 'user-a' })).toBe(true);
    expect(list.isDenied({ sub: 'user-b', iat: 1 })).toBe(false);
    expect(list.size()).toBe(3);
  });

  it('cuts a logout off by the grant’s creation, with milliseconds, when the token carries it', () => {
    const list = createDenyList({ now: () => NOW });
    list.apply([subject('u', 1000.5)]);
    expect(list.isDenied({ sub: 'u', iat: 1001, grant_iat: 1000.4 })).toBe(true);
    expect(list.isDenied({ sub: 'u', iat: 1000, grant_iat: 1000.6 })).toBe(false);
    expect(predatesLogout(undefined, 1)).toBe(true);
  });

  it('starts empty, vouching for every token', () => {
    expect(createDenyList().isDenied({ jti: 'anything', sub: 'anyone', iat: 0 })).toBe(false);
  });

  it('returns only what is news: a new token or grant, a later logout', () => {
    const list = createDenyList({ now: () => NOW });
    expect(list.apply([grant('g'), subject('u', 1000), grant('g')])).toEqual([
      { kind: 'grant', value: 'g' },
      { kind: 'subject', value: 'u' },
    ]);
    expect(list.apply([grant('g'), subject('u', 1000), subject('u', 999)])).toEqual([]);
    // An earlier logout arriving late does not move the cut-off back.
    expect(list.isDenied({ sub: 'u', iat: 999.5 })).toBe(true);
    expect(list.apply([subject('u', 1001)])).toEqual([{ kind: 'subject', value: 'u' }]);
    expect(list.isDenied({ sub: 'u', iat: 1000 })).toBe(true);
  });

  it('skips expired entries and prunes those that expire', () => {
    let now = NOW;
    const list = createDenyList({ now: () => now });
    expect(list.apply([jti('old', NOW_SEC), jti('soon', NOW_SEC + 10), jti('later')])).toEqual([
      { kind: 'jti', value: 'soon' },
      { kind: 'jti', value: 'later' },
    ]);
    expect(list.isDenied({ jti: 'old' })).toBe(false);
    list.apply([subject('u', 1000, NOW_SEC + 10), grant('g', NOW_SEC + 10)]);
    expect(list.size()).toBe(4);
    now = (NOW_SEC + 10) * 1000;
    list.prune();
    expect(list.size()).toBe(1);
    expect(list.isDenied({ jti: 'soon' })).toBe(false);
    expect(list.isDenied({ sub: 'u', iat: 1 })).toBe(false);
    expect(list.isDenied({ grant_id: 'g' })).toBe(false);
    expect(list.isDenied({ jti: 'later' })).toBe(true);
  });

  it('keeps the latest expiry when an entry comes again', () => {
    let now = NOW;
    const list = createDenyList({ now: () => now });
    list.apply([jti('j', NOW_SEC + 10), jti('j', NOW_SEC + 20), jti('j', NOW_SEC + 5)]);
    now = (NOW_SEC + 15) * 1000;
    list.prune();
    expect(list.isDenied({ jti: 'j' })).toBe(true);
  });
});
