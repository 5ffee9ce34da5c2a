import { z } from '../openapi/zod.js';
import { Limit } from './common.js';

export const CreatePaymentBody = z
  .strictObject({
    orderId: z
      .uuid()
      .openapi({ description: 'An order the caller may see (404 otherwise; 409 if cancelled)' }),
    amount: z
      .number()
      .int()
      .min(1)
      .max(1_000_000_000_000)
      .openapi({ description: 'Positive integer in minor units (cents)', example: 1999 }),
    currency: z
      .string()
      .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as EUR')
      .openapi({ example: 'EUR' }),
  })
  .openapi('CreatePayment');

export const PaymentSchema = z
  .object({
    id: z.uuid(),
    userId: z.string().openapi({ description: 'Who paid: the subject that created it' }),
    orderId: z.uuid(),
    amount: z.number().int(),
    currency: z.string(),
    status: z.enum(['succeeded', 'failed']),
    providerRef: z
      .string()
      .openapi({ description: 'The payment provider’s reference of the charge' }),
    createdAt: z.iso.datetime(),
  })
  .openapi('Payment');

export const ListPaymentsQuery = z.object({
  after: z
    .string()
    .min(1)
    .max(512)
    .optional()
    .openapi({ param: { description: '`nextCursor` of the previous page' } }),
  limit: Limit,
});

export const PaymentPageSchema = z
  .object({ items: z.array(PaymentSchema), nextCursor: z.string().nullable() })
  .openapi('PaymentPage');

export const IdempotencyKeyHeaders = z.object({
  'idempotency-key': z
    .string()
    .min(1)
    .max(255)
    .openapi({
      param: {
        description:
          'Required. 1..255 printable ASCII characters, identical on every retry of one payment. ' +
          'Scoped to the caller and kept 24 h: the same key and body replay the first response ' +
          '(`Idempotent-Replayed: true`); another body is 422; a request still running is 409.',
      },
    }),
});

export type CreatePaymentInput = z.output<typeof CreatePaymentBody>;
