import { z } from 'zod';

/** RESOURCES named further APIs before they were data: set, it stops the start with the way on. */
export const resourceVariables = {
  RESOURCES: z
    .string()
    .optional()
    .refine(
      (v) => v === undefined || v.trim() === '',
      'is retired: register each API with POST /admin/resources or `npm run admin -- resource:create` (docs/roles.md "Resource servers")',
    ),
};
