import { describe, expect, test } from '@jest/globals';
import { z } from 'zod';
import { ValidationError } from '../errors.js';
import { parseBody, parseQuery } from './validate.js';

const query = z.object({
  status: z.array(z.enum(['a', 'b'])).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

function fieldsOf(fn: () => unknown): Record<string, string[]> {
  try {
    fn();
  } catch (error) {
    if (error instanceof ValidationError) return error.fields;
    throw error;
  }
  throw new Error('expected a ValidationError');
}

describe('parseQuery', () => {
  test('array parameters accept repetition and commas', () => {
    expect(parseQuery(query, { status: ['a', 'b'] })).toEqual({ status: ['a', 'b'], limit: 20 });
    expect(parseQuery(query, { status: 'a,b' })).toEqual({ status: ['a', 'b'], limit: 20 });
    expect(parseQuery(query, { status: ['a', 'b,a'] }).status).toEqual(['a', 'b', 'a']);
  });

  test('unknown, repeated single and out-of-range parameters are each named', () => {
    expect(
      fieldsOf(() => parseQuery(query, { limit: ['1', '2'], extra: 'x', status: 'c' })),
    ).toEqual({
      limit: ['must be given once'],
      extra: ['unknown query parameter'],
      'status.0': [expect.any(String)],
    });
  });
});

describe('parseBody', () => {
  test('strict objects name every unknown key', () => {
    const schema = z.strictObject({ a: z.string() });
    expect(fieldsOf(() => parseBody(schema, { a: 'x', b: 1, c: 2 }))).toEqual({
      b: ['unknown or read-only field'],
      c: ['unknown or read-only field'],
    });
  });
});
