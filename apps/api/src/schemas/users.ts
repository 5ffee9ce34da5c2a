import { z } from '../openapi/zod.js';

export const UserSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string().nullable(),
    roles: z.array(z.string()),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi('User');

export const UserIdParams = z.object({
  id: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { description: 'User id' } }),
});

export const UserPageSchema = z
  .object({
    items: z.array(UserSchema),
    nextCursor: z.string().nullable().openapi({ description: 'null on the last page' }),
  })
  .openapi('UserPage');
