import type { z } from 'zod';
import {
  addFieldError,
  collectZodIssues,
  fieldErrors,
  toFieldErrors,
  type FieldMap,
} from '@portcullis/observability';
import { ValidationError } from '../errors.js';

type Query = Record<string, string | string[] | undefined>;

function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  while (['optional', 'default', 'nullable', 'prefault'].includes(s.def.type)) {
    s = (s.def as unknown as { innerType: z.ZodType }).innerType;
  }
  return s;
}

/** Array parameters accept repetition and commas; any other parameter given twice is an error. */
export function parseQuery<S extends z.ZodObject>(schema: S, query: Query): z.output<S> {
  const shape = schema.shape as Record<string, z.ZodType>;
  const fields: FieldMap = new Map();
  // No prototype: a `__proto__` parameter is then an ordinary (unknown) key, never a setter.
  const input: Record<string, unknown> = Object.create(null);
  for (const [key, raw] of Object.entries(query)) {
    if (raw === undefined) continue;
    const field = Object.hasOwn(shape, key) ? shape[key] : undefined;
    if (!field) {
      addFieldError(fields, key, 'unknown query parameter');
      continue;
    }
    if (unwrap(field).def.type === 'array') {
      input[key] = [raw]
        .flat()
        .flatMap((v) => v.split(','))
        .map((v) => v.trim())
        .filter(Boolean);
    } else if (Array.isArray(raw)) {
      addFieldError(fields, key, 'must be given once');
    } else {
      input[key] = raw;
    }
  }
  const result = schema.safeParse(input);
  // Problems found above (unknown, repeated) are the more precise ones for their key.
  const issues: FieldMap = new Map();
  if (!result.success) collectZodIssues(issues, result.error);
  for (const [key, messages] of fields) issues.set(key, messages);
  if (issues.size > 0) throw new ValidationError(toFieldErrors(issues), 'invalid query parameters');
  return (result as { data: z.output<S> }).data;
}

export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const result = schema.safeParse(body);
  if (!result.success) throw new ValidationError(fieldErrors(result.error));
  return result.data;
}
