import type { z } from 'zod';
import { ValidationError, type FieldErrors } from '../errors.js';

type Query = Record<string, string | string[] | undefined>;

function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  while (['optional', 'default', 'nullable', 'prefault'].includes(s.def.type)) {
    s = (s.def as unknown as { innerType: z.ZodType }).innerType;
  }
  return s;
}

function add(fields: FieldErrors, key: string, message: string): void {
  (fields[key] ??= []).push(message);
}

/** Zod issues as `{ field: [messages] }`; unknown keys are each named. */
export function fieldErrors(error: z.ZodError, prefix = ''): FieldErrors {
  const fields: FieldErrors = {};
  for (const issue of error.issues) {
    const path = [prefix, ...issue.path.map(String)].filter(Boolean).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys)
        add(fields, path ? `${path}.${key}` : key, 'unknown or read-only field');
    } else {
      add(fields, path || '(body)', issue.message);
    }
  }
  return fields;
}

/**
 * Query strings arrive as string | string[]. Array-typed parameters accept repetition
 * and comma-separated values (`status=a&status=b` or `status=a,b`); any other parameter
 * given twice is an error rather than a silent first-or-last pick.
 */
export function parseQuery<S extends z.ZodObject>(schema: S, query: Query): z.output<S> {
  const shape = schema.shape as Record<string, z.ZodType>;
  const fields: FieldErrors = {};
  const input: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(query)) {
    if (raw === undefined) continue;
    const field = shape[key];
    if (!field) {
      add(fields, key, 'unknown query parameter');
      continue;
    }
    if (unwrap(field).def.type === 'array') {
      input[key] = [raw]
        .flat()
        .flatMap((v) => v.split(','))
        .map((v) => v.trim())
        .filter(Boolean);
    } else if (Array.isArray(raw)) {
      add(fields, key, 'must be given once');
    } else {
      input[key] = raw;
    }
  }
  const result = schema.safeParse(input);
  if (!result.success) Object.assign(fields, { ...fieldErrors(result.error), ...fields });
  if (Object.keys(fields).length > 0) throw new ValidationError(fields, 'invalid query parameters');
  return (result as { data: z.output<S> }).data;
}

export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const result = schema.safeParse(body);
  if (!result.success) throw new ValidationError(fieldErrors(result.error));
  return result.data;
}
