import { describe, expect, test } from '@jest/globals';
import { FAKE_PROVIDER_KEYS, FakePaymentProvider } from './fake-provider.js';

const request = (key: string, amount = 1999) => ({
  idempotencyKey: key,
  amount,
  currency: 'EUR',
  reference: 'order-1',
});

describe('FakePaymentProvider', () => {
  test('remembers a bounded number of keys, newest kept: a recent retry is still deduped', async () => {
    const fake = new FakePaymentProvider(3);
    for (const key of ['a', 'b', 'c', 'd', 'e']) await fake.charge(request(key));
    expect(fake.keysHeld).toBe(3);
    expect(fake.chargeCount).toBe(5);
    const first = await fake.charge(request('e'));
    expect(fake.chargeCount).toBe(5);
    expect(first.providerRef).toMatch(/^fake_ch_/);
    await expect(fake.charge(request('e', 2000))).rejects.toThrow('idempotency key reused');
    // The oldest is forgotten, as a PSP forgets old keys: charged again.
    await fake.charge(request('a'));
    expect(fake.chargeCount).toBe(6);
    expect(fake.keysHeld).toBe(3);
  });

  test('holds at most FAKE_PROVIDER_KEYS by default', async () => {
    const fake = new FakePaymentProvider();
    for (let i = 0; i < FAKE_PROVIDER_KEYS + 50; i++) await fake.charge(request(`k${i}`));
    expect(fake.keysHeld).toBe(FAKE_PROVIDER_KEYS);
  });
});
