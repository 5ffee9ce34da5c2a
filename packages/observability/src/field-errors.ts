import type { z } from 'zod';
import type { FieldErrors } from './error-codes.js';

/** Field names come from the client (`__proto__`, `valueOf`…): a Map, never a plain object. */
export type FieldMap = Map<string, string[]>;

export function addFieldError(fields: FieldMap, key: string, message: string): void {
  const messages = fields.get(key);
  if (messages) messages.push(message);
  else fields.set(key, [message]);
}

/** Own properties only (Object.fromEntries defines even `__proto__` as a plain key). */
export const toFieldErrors = (fields: FieldMap): FieldErrors => Object.fromEntries(fields);

/** How issues are named: under a `prefix`; `topLevel`: by the body's member alone (the admin API). */
export interface FieldNaming {
  prefix?: string;
  topLevel?: boolean;
}

/** Each zod issue under its dotted path; each unknown key named as its own field. */
export function collectZodIssues(
  fields: FieldMap,
  error: z.ZodError,
  { prefix = '', topLevel = false }: FieldNaming = {},
): void {
  for (const issue of error.issues) {
    const issuePath = issue.path.map(String);
    const path = [prefix, ...(topLevel ? issuePath.slice(0, 1) : issuePath)]
      .filter(Boolean)
      .join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys)
        addFieldError(fields, path ? `${path}.${key}` : key, 'unknown or read-only field');
    } else {
      addFieldError(fields, path || '(body)', issue.message);
    }
  }
}

/** Zod issues as `{ field: [messages] }` (the `fields` of a 422 at the API and the admin API). */
export function fieldErrors(error: z.ZodError, naming: FieldNaming = {}): FieldErrors {
  const fields: FieldMap = new Map();
  collectZodIssues(fields, error, naming);
  return toFieldErrors(fields);
}
