import type { User } from '@portcullis/accounts';
import { fieldErrors } from '@portcullis/observability';
import type { z } from 'zod';
import { AdminError } from './errors.js';

/** A request body or query by its schema; 400 validation_failed naming each field. */
export function parse<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input ?? {});
  if (!result.success)
    throw new AdminError(
      'validation_failed',
      'the request is invalid',
      fieldErrors(result.error, { topLevel: true }),
    );
  return result.data;
}

/** A user as the admin API shows it. */
export const userView = (u: User) => ({
  id: u.id,
  email: u.email,
  name: u.name,
  roles: u.roles,
  disabledAt: u.disabledAt,
  /** null until the address is proven (a sign-up's mailed link). */
  emailVerifiedAt: u.emailVerifiedAt,
  createdAt: u.createdAt,
});
