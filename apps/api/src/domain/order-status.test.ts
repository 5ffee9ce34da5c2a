import { describe, expect, test } from '@jest/globals';
import { AppError } from '../errors.js';
import {
  assertEditable,
  assertTransition,
  canTransition,
  ORDER_STATUSES,
  ORDER_TRANSITIONS,
} from './order-status.js';

describe('order status machine', () => {
  test('the allowed transitions, and only those', () => {
    const allowed = ORDER_STATUSES.flatMap((from) =>
      ORDER_STATUSES.filter((to) => canTransition(from, to)).map((to) => `${from}->${to}`),
    );
    expect(allowed).toEqual([
      'pending->open',
      'pending->cancelled',
      'open->fulfilled',
      'open->cancelled',
    ]);
  });

  test('an illegal transition is a 409 invalid_transition', () => {
    expect(() => assertTransition('cancelled', 'cancelled')).toThrow(AppError);
    try {
      assertTransition('fulfilled', 'cancelled');
    } catch (error) {
      expect(error).toMatchObject({ status: 409, code: 'invalid_transition' });
    }
  });

  test('final states cannot be edited', () => {
    for (const status of ORDER_STATUSES) {
      const final = ORDER_TRANSITIONS[status].length === 0;
      if (final)
        expect(() => assertEditable(status)).toThrow(
          expect.objectContaining({ code: 'order_closed' }),
        );
      else expect(() => assertEditable(status)).not.toThrow();
    }
  });
});
