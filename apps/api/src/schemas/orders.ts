import { z } from '../openapi/zod.js';
import { ORDER_STATUSES } from '../domain/order-status.js';
import { Limit } from './common.js';

export const OrderStatusSchema = z.enum(ORDER_STATUSES).openapi('OrderStatus');

const OrderItem = z
  .strictObject({
    sku: z.string().trim().min(1).max(64),
    quantity: z.number().int().min(1).max(10_000),
  })
  .openapi('OrderItem');

// What a client may write. Everything else (id, userId, status, version, timestamps) is
// server-owned; strict objects turn an attempt to set it into a 422 naming the field.
const content = {
  customer: z.string().trim().min(1).max(200).openapi({ example: 'ACME Corp' }),
  amount: z
    .number()
    .int()
    .min(0)
    .max(1_000_000_000_000)
    .openapi({ description: 'Integer amount in minor units (cents)', example: 1999 }),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as EUR')
    .openapi({ example: 'EUR' }),
  items: z.array(OrderItem).max(100),
  note: z.string().max(2000),
};

/** Optimistic concurrency token: a stale value gives 409 (If-Match is the header form). */
const version = z
  .number()
  .int()
  .min(1)
  .openapi({ description: 'The version the change was based on; stale -> 409' });

export const OrderSchema = z
  .object({
    id: z.uuid(),
    userId: z.string().openapi({ description: 'Owner: the subject that created the order' }),
    customer: z.string(),
    status: OrderStatusSchema,
    amount: z.number().int(),
    currency: z.string(),
    items: z.array(OrderItem).optional(),
    note: z.string().optional(),
    version: z.number().int(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi('Order');

export const CreateOrderBody = z
  .strictObject({
    customer: content.customer,
    amount: content.amount,
    currency: content.currency,
    items: content.items.optional(),
    note: content.note.optional(),
  })
  .openapi('CreateOrder');

export const ReplaceOrderBody = z
  .strictObject({ ...CreateOrderBody.shape, version: version.optional() })
  .openapi('ReplaceOrder');

/** JSON merge patch (RFC 7396): null removes an optional field. */
export const PatchOrderBody = z
  .strictObject({
    customer: content.customer.optional(),
    amount: content.amount.optional(),
    currency: content.currency.optional(),
    items: content.items.nullable().optional(),
    note: content.note.nullable().optional(),
    version: version.optional(),
  })
  .openapi('PatchOrder');

export const ListOrdersQuery = z.object({
  status: z
    .array(OrderStatusSchema)
    .optional()
    .openapi({
      param: {
        description: 'Repeat (`status=open&status=pending`) or comma-separate',
        style: 'form',
        explode: true,
      },
    }),
  customer: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .openapi({ param: { description: 'Exact customer name' } }),
  createdAfter: z.iso
    .date('must be a date YYYY-MM-DD')
    .optional()
    .openapi({ param: { description: 'Orders created on or after 00:00 UTC of this date' } }),
  page: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(1)
    .openapi({ param: { description: 'Page number, from 1' } }),
  limit: Limit,
});

export const OrderPageSchema = z
  .object({
    items: z.array(OrderSchema),
    total: z.number().int(),
    page: z.number().int(),
    limit: z.number().int(),
  })
  .openapi('OrderPage');

export type CreateOrderInput = z.output<typeof CreateOrderBody>;
export type PatchOrderInput = z.output<typeof PatchOrderBody>;
export type ListOrdersInput = z.output<typeof ListOrdersQuery>;
