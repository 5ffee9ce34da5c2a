import { describe, expect, it } from '@jest/globals';
import { PAYMENT_DETAIL_TYPE, paymentDetailOf } from './payment-detail.js';

const detail = {
  type: PAYMENT_DETAIL_TYPE,
  amount: 1250,
  currency: 'EUR',
  orderId: '6f1c3c1e-2f7a-4d6b-9a43-0c1e5b7d2a11',
  authorizationId: 'a-1',
  locations: ['https://api.example.com'],
};

describe('paymentDetailOf', () => {
  it('returns a well-formed payment detail as it is', () => {
    expect(paymentDetailOf(detail)).toBe(detail);
    const { locations: _, ...withoutLocations } = detail;
    expect(paymentDetailOf(withoutLocations)).toBe(withoutLocations);
  });

  it('leaves a detail of another type alone', () => {
    expect(paymentDetailOf({ ...detail, type: 'urn:example:other' })).toBeUndefined();
  });

  it.each([
    ['a fractional amount', { amount: 12.5 }],
    ['a zero amount', { amount: 0 }],
    ['an amount past the maximum', { amount: 1_000_000_000_001 }],
    ['an amount as text', { amount: '1250' }],
    ['a lower-case currency', { currency: 'eur' }],
    ['no order', { orderId: undefined }],
    ['an empty authorization id', { authorizationId: '' }],
    ['locations not a list', { locations: 'https://api.example.com' }],
  ])('refuses %s', (_, change) => {
    expect(paymentDetailOf({ ...detail, ...change })).toBeUndefined();
  });
});
