import { randomUUID } from 'node:crypto';
import { createAccountsRepo, type User } from '@portcullis/accounts';
import type { Db } from '@portcullis/db';
import { createApiKeysRepo } from '../../src/data/api-keys-repo.js';
import { createOrdersRepo, type Order, type OrderContent } from '../../src/data/orders-repo.js';
import type { OrderStatus } from '../../src/domain/order-status.js';

let counter = 0;

/** The password of every `makeUser` user (so it can sign in at the API or the auth server). */
export const PASSWORD = 'correct horse battery staple';

/** A stored user (argon2id-hashed password, as the auth server would create). */
export function makeUser(db: Db, roles: string[] = ['viewer']): Promise<User> {
  counter += 1;
  return createAccountsRepo(db).create({
    email: `user${counter}-${randomUUID().slice(0, 6)}@example.test`,
    password: PASSWORD,
    roles,
  });
}

/**
 * An API key stored directly (bypassing POST /api-keys, which wants a step-up sign-in);
 * returns the key itself.
 */
export async function makeApiKey(db: Db, ownerId: string, permissions: string[]): Promise<string> {
  const { key } = await createApiKeysRepo(db).create({
    ownerId,
    name: `key${++counter}`,
    permissions,
    now: new Date(),
  });
  return key;
}

/** An order stored directly (bypassing the API), e.g. with a past creation date or a given status. */
export async function makeOrder(
  db: Db,
  userId: string,
  overrides: Partial<OrderContent> & { status?: OrderStatus; createdAt?: Date } = {},
): Promise<Order> {
  const { status, createdAt, ...content } = overrides;
  const repo = createOrdersRepo(db);
  const order = await repo.create(
    userId,
    { customer: 'ACME', amount: 1000, currency: 'EUR', ...content },
    createdAt ?? new Date(),
  );
  if (!status || status === 'pending') return order;
  return (await repo.update(order.id, order.version, { status }, order.createdAt))!;
}

export const newOrderBody = (overrides: Record<string, unknown> = {}) => ({
  customer: 'ACME Corp',
  amount: 1999,
  currency: 'EUR',
  ...overrides,
});
