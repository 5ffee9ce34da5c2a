import { createHash, randomUUID } from 'node:crypto';
import type { ParameterizedContext } from 'koa';
import { ACR, hasPermission, type Principal } from '@portcullis/claims';
import { isDatabaseUnavailable } from '@portcullis/db';
import { PAYMENT_DETAIL_TYPE, paymentDetailOf } from '@portcullis/shop';
import { paymentJson, type Payment } from '../data/payments-repo.js';
import type { IdempotencyClaim, StoredResponse } from '../data/idempotency-repo.js';
import {
  ConflictError,
  IdempotencyError,
  InsufficientAuthorizationDetailsError,
  NotFoundError,
  ServiceUnavailableError,
} from '../errors.js';
import { createCursorCodec } from '../http/cursor.js';
import { sendCacheable } from '../http/conditional.js';
import { principalOf } from '../middleware/authenticate.js';
import { defineRoute, type ApiRouter } from '../openapi/define-route.js';
import { z } from '../openapi/zod.js';
import { ErrorSchema, IdParams, IfNoneMatchHeaders } from '../schemas/common.js';
import {
  CreatePaymentBody,
  IdempotencyKeyHeaders,
  ListPaymentsQuery,
  PaymentPageSchema,
  PaymentSchema,
  type CreatePaymentInput,
} from '../schemas/payments.js';
import type { RouteDeps } from './deps.js';
import { visibilityOf as orderVisibilityOf } from './order-access.js';
import { Perm } from '../permissions.js';

const tags = ['payments'];
const KEY_TTL_MS = 24 * 3600_000;
/** An older in-flight key's process died (docs/api-contracts.md#payments-and-idempotency). */
export const STALE_CLAIM_MS = 60_000;
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/** Admins (`payments:*`) see every payment; everyone else their own. */
function paymentVisibility(principal: Principal): { ownerId?: string } {
  return hasPermission(principal.permissions, Perm.PaymentsAll)
    ? {}
    : { ownerId: principal.subject };
}

function idempotencyKeyOf(ctx: ParameterizedContext): string {
  const key = ctx.get('Idempotency-Key');
  if (key === '') throw new IdempotencyError('idempotency_key_required');
  if (!KEY_PATTERN.test(key)) throw new IdempotencyError('idempotency_key_invalid');
  return key;
}

/** JSON with object keys sorted at every level, so key order never changes the hash. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function send(ctx: ParameterizedContext, response: StoredResponse, replayed: boolean): void {
  ctx.status = response.status;
  for (const [name, value] of Object.entries(response.headers)) ctx.set(name, value);
  if (replayed) ctx.set('Idempotent-Replayed', 'true');
  ctx.body = response.body;
}

/** Fixed texts of a 403 `insufficient_authorization_details` (they go into a quoted-string). */
const NOT_AUTHORIZED =
  'no payment authorized by this token matches this order, currency and amount';
const ALREADY_USED = 'the payment authorized by this token was made already';

/** The token's RFC 9396 payment details, or undefined when it has none (permissions alone rule). */
function paymentDetailsOf(principal: Principal) {
  const details = principal.authorizationDetails?.filter((d) => d.type === PAYMENT_DETAIL_TYPE);
  return details?.length ? details.map(paymentDetailOf) : undefined;
}

export function paymentsRoutes(api: ApiRouter, deps: RouteDeps): void {
  const { payments, idempotency, orders } = deps.repos;
  const provider = deps.paymentProvider;
  const cursors = createCursorCodec(() => deps.repos.secrets.get('cursor-hmac'), 'payments');

  /** README "Payment authorization details": a detail matching the payment, used once. */
  async function useAuthorizationDetail(
    principal: Principal,
    body: CreatePaymentInput,
    claim: IdempotencyClaim,
  ): Promise<void> {
    const details = paymentDetailsOf(principal);
    if (!details) return;
    const matching = details.filter(
      (d) =>
        d !== undefined &&
        d.orderId === body.orderId &&
        d.currency === body.currency &&
        body.amount <= d.amount,
    );
    if (matching.length === 0) throw new InsufficientAuthorizationDetailsError(NOT_AUTHORIZED);
    for (const detail of matching) {
      const authorizationId = detail!.authorizationId;
      const use = { authorizationId, claim, orderId: body.orderId, now: deps.clock() };
      if (await payments.useAuthorization(use)) return;
    }
    throw new InsufficientAuthorizationDetailsError(ALREADY_USED);
  }

  async function pay(
    principal: Principal,
    body: CreatePaymentInput,
    claim: IdempotencyClaim,
  ): Promise<StoredResponse> {
    const order = await orders.find(body.orderId, orderVisibilityOf(principal));
    if (!order) throw new NotFoundError('no such order');
    if (order.status === 'cancelled')
      throw new ConflictError('order_closed', 'the order is cancelled');
    await useAuthorizationDetail(principal, body, claim);
    let charge;
    try {
      // The provider key is the claim's operation id, so a retry of this key charges idempotently.
      charge = await provider.charge({
        idempotencyKey: `portcullis_${claim.id}`,
        amount: body.amount,
        currency: body.currency,
        reference: order.id,
      });
    } catch (error) {
      // Unknown whether the charge happened: the retry charges with the same provider key.
      throw new ServiceUnavailableError(
        'the payment provider is unavailable; retry with the same Idempotency-Key',
        1,
        error,
      );
    }
    const payment: Payment = {
      id: randomUUID(),
      userId: principal.subject,
      orderId: order.id,
      amount: body.amount,
      currency: body.currency,
      status: charge.status,
      providerRef: charge.providerRef,
      createdAt: deps.clock(),
    };
    const response: StoredResponse = {
      status: 201,
      headers: { Location: `/payments/${payment.id}` },
      body: paymentJson(payment),
    };
    if (await payments.commit(payment, claim, response)) return response;
    // Our claim was taken over as stale and the other request finished first.
    const stored = await idempotency.storedResponse(claim.subject, claim.key);
    if (!stored) throw new IdempotencyError('idempotency_key_in_flight');
    return stored;
  }

  defineRoute(
    api,
    {
      method: 'post',
      path: '/payments',
      operationId: 'createPayment',
      summary: 'Pay for an order, exactly once per Idempotency-Key',
      tags,
      permission: Perm.PaymentsCreate,
      stepUp: {
        acr: ACR.mfa,
        maxAgeSec: api.stepUp.maxAgeSec,
        when: {
          description: `amount above ${api.stepUp.paymentAmount} (STEP_UP_PAYMENT_AMOUNT)`,
          applies: ({ body }) => body.amount > api.stepUp.paymentAmount,
        },
      },
      request: { body: CreatePaymentBody, headers: IdempotencyKeyHeaders },
      responses: {
        201: {
          description:
            'The payment (status succeeded or failed); a replay adds `Idempotent-Replayed: true`',
          headers: z.object({
            Location: z.string(),
            'Idempotent-Replayed': z.literal('true').optional(),
          }),
          content: { 'application/json': { schema: PaymentSchema } },
        },
        400: {
          description: '`idempotency_key_required` / `idempotency_key_invalid` (or malformed JSON)',
        },
        403: {
          description:
            'Lacking the permission, or a credential that is no user sign-in: exactly ' +
            '`{"error":"forbidden"}`; or `insufficient_authorization_details`: the token carries ' +
            'RFC 9396 payment details and none allows this payment (order, currency, amount at ' +
            'most the authorized one) or it was made already (README "Payment authorization details")',
          content: { 'application/json': { schema: ErrorSchema } },
        },
        404: { description: 'No such order, or not visible to the caller' },
        409: {
          description: '`idempotency_key_in_flight`, or `order_closed` (the order is cancelled)',
        },
        422: {
          description:
            '`idempotency_key_reused` (same key, another body), or validation failed (not stored)',
        },
        503: { description: 'Payment provider unavailable: retry with the same key' },
      },
    },
    async function createPayment(ctx, { body }) {
      const principal = principalOf(ctx);
      const key = idempotencyKeyOf(ctx);
      const outcome = await idempotency.claim({
        subject: principal.subject,
        key,
        requestHash: createHash('sha256').update(canonicalJson(body)).digest('hex'),
        now: deps.clock(),
        ttlMs: KEY_TTL_MS,
        staleMs: STALE_CLAIM_MS,
      });
      if (outcome.outcome === 'reused') throw new IdempotencyError('idempotency_key_reused');
      if (outcome.outcome === 'in_flight') throw new IdempotencyError('idempotency_key_in_flight');
      if (outcome.outcome === 'replay') return send(ctx, outcome.response, true);
      let response: StoredResponse;
      try {
        response = await pay(principal, body, outcome.claim);
      } catch (error) {
        // Refused before any charge (403, 404, 409): nothing is stored, the key is free again.
        if (
          error instanceof NotFoundError ||
          error instanceof InsufficientAuthorizationDetailsError ||
          (error instanceof ConflictError && error.code === 'order_closed')
        ) {
          await idempotency.release(outcome.claim);
        } else {
          // Ended incomplete: stale at once, so the retry takes over with the same provider key.
          const giveUpAt = new Date(outcome.claim.lockedAt.getTime() + STALE_CLAIM_MS);
          const letGo = idempotency.letGo(outcome.claim, giveUpAt);
          if (!isDatabaseUnavailable(error)) await letGo;
        }
        throw error;
      }
      send(ctx, response, false);
    },
  );

  defineRoute(
    api,
    {
      method: 'get',
      path: '/payments',
      operationId: 'listPayments',
      summary: 'List payments, newest first (admins: all; others: their own)',
      tags,
      permission: Perm.PaymentsRead,
      request: { query: ListPaymentsQuery },
      responses: {
        200: {
          description: 'A page of payments',
          content: { 'application/json': { schema: PaymentPageSchema } },
        },
        400: { description: 'Tampered or foreign cursor (`invalid_cursor`)' },
      },
    },
    async function listPayments(ctx, { query }) {
      const principal = principalOf(ctx);
      const after = query.after === undefined ? undefined : (await cursors.decode(query.after)).id;
      const rows = await payments.list(paymentVisibility(principal), {
        after,
        limit: query.limit + 1,
      });
      const items = rows.slice(0, query.limit);
      const last = items.at(-1);
      const nextCursor =
        rows.length > query.limit && last ? await cursors.encode({ id: last.id }) : null;
      ctx.body = { items: items.map(paymentJson), nextCursor };
    },
  );

  defineRoute(
    api,
    {
      method: 'get',
      path: '/payments/:id',
      operationId: 'getPayment',
      summary: 'Get one payment',
      tags,
      permission: Perm.PaymentsRead,
      request: { params: IdParams, headers: IfNoneMatchHeaders },
      responses: {
        200: {
          description: 'The payment',
          content: { 'application/json': { schema: PaymentSchema } },
        },
        304: { description: 'Not modified' },
      },
    },
    async function getPayment(ctx, { params }) {
      const principal = principalOf(ctx);
      const payment = await payments.find(params.id, paymentVisibility(principal));
      if (!payment) throw new NotFoundError();
      sendCacheable(ctx, paymentJson(payment));
    },
  );
}
