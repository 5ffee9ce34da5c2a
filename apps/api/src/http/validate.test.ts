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

  test('parameters named after Object.prototype members are unknown parameters', () => {
    for (const key of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      // As Koa hands it over: a query object without a prototype.
      const given = Object.assign(Object.create(null), { [key]: 'x', limit: '5' });
      expect(fieldsOf(() => parseQuery(query, given))).toEqual({
        [key]: ['unknown query parameter'],
      });
    }
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

  test('keys named after Object.prototype members are named like any other key', () => {
    const schema = z.strictObject({ a: z.string() });
    const body = JSON.parse('{"a": "x", "constructor": 1, "toString": 2, "__proto__": 3}');
    const fields = fieldsOf(() => parseBody(schema, body));
    expect(Object.keys(fields).sort()).toEqual(['__proto__', 'constructor', 'toString']);
    expect(Object.getPrototypeOf(fields)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(fields, '__proto__')?.value).toEqual([
      'unknown or read-only field',
    ]);
  });
});
