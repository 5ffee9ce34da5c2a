import { randomUUID } from 'node:crypto';
import type { AuthorizationDetail } from '@portcullis/claims';
import { PAYMENT_DETAIL_TYPE } from '@portcullis/shop';
import {
  errors,
  type AuthorizationDetailsForIntrospection,
  type KoaContextWithOIDC,
  type RichAuthorizationRequestsActiveConfiguration,
} from 'oidc-provider';
import { z } from 'zod';

// RFC 9396 on oidc-provider's richAuthorizationRequests (README "Payment authorization details
// (RFC 9396)"; docs/security.md "Payment authorization details").

/** Most details one request may carry: each one lengthens the access token. */
export const MAX_AUTHORIZATION_DETAILS = 5;

/** The member the server adds at consent; the API records the payment it allows under it. */
export const AUTHORIZATION_ID = 'authorizationId';

/** A payment detail as a client asks for it: the shape of POST /payments, `amount` a maximum. */
function paymentDetailSchema(apiAudience: string) {
  return z.strictObject({
    type: z.literal(PAYMENT_DETAIL_TYPE),
    amount: z.number().int().min(1).max(1_000_000_000_000),
    currency: z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as EUR'),
    orderId: z.uuid(),
    locations: z
      .array(z.literal(apiAudience, { error: `must be ${apiAudience}` }))
      .min(1)
      .max(1)
      .optional(),
  });
}

/** JSON with sorted keys, so two equal details compare equal whatever their member order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A detail as the client sent it: without the server's `authorizationId`. */
function asRequested(detail: AuthorizationDetail): string {
  const { [AUTHORIZATION_ID]: _id, ...rest } = detail;
  return canonical(rest);
}

function requestedDetails(ctx: KoaContextWithOIDC): AuthorizationDetail[] | undefined {
  const raw = (ctx.oidc.params as { authorization_details?: unknown } | undefined)
    ?.authorization_details;
  if (typeof raw !== 'string') return undefined;
  const parsed = JSON.parse(raw) as AuthorizationDetail[];
  return parsed.length > 0 ? parsed : undefined;
}

type RarFeature = RichAuthorizationRequestsActiveConfiguration & {
  authorizationDetailsForIntrospection: AuthorizationDetailsForIntrospection;
};

/** oidc-provider's `features.richAuthorizationRequests`: the payment type and where details go. */
export function richAuthorizationRequestsFeature(apiAudience: string): RarFeature {
  const schema = paymentDetailSchema(apiAudience);
  return {
    enabled: true,
    types: {
      [PAYMENT_DETAIL_TYPE]: {
        validate(ctx, detail) {
          // The device flow's pages show no details, so they are never asked for there.
          if (ctx.oidc.route === 'device_authorization') {
            throw new errors.InvalidAuthorizationDetails(
              'authorization_details are not supported in the device flow',
            );
          }
          if ((requestedDetails(ctx)?.length ?? 0) > MAX_AUTHORIZATION_DETAILS) {
            throw new errors.InvalidAuthorizationDetails(
              `at most ${MAX_AUTHORIZATION_DETAILS} authorization details per request`,
            );
          }
          const parsed = schema.safeParse(detail);
          if (!parsed.success) {
            const issue = parsed.error.issues[0];
            const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
            throw new errors.InvalidAuthorizationDetails(
              `invalid ${PAYMENT_DETAIL_TYPE} detail: ${where}${issue?.message ?? 'invalid'}`,
            );
          }
        },
      },
    },
    // The code carries what this request asked for and the user approved, each with a new id.
    async authorizationDetailsForGrantSource(ctx) {
      const requested = requestedDetails(ctx);
      if (!requested) return undefined;
      const approved = new Set(
        ((ctx.oidc.grant as { rar?: AuthorizationDetail[] } | undefined)?.rar ?? []).map(
          asRequested,
        ),
      );
      if (!requested.every((d) => approved.has(asRequested(d)))) {
        throw new errors.AccessDenied('the authorization details were not approved');
      }
      return requested.map((d) => ({ ...d, [AUTHORIZATION_ID]: randomUUID() }));
    },
    // Codes and refresh tokens pass theirs on (same ids: a refresh never allows a payment again).
    async authorizationDetailsForAccessToken(ctx, token, source, grantType) {
      const granted =
        grantType === 'authorization_code' || grantType === 'refresh_token'
          ? ((source as { rar?: AuthorizationDetail[] } | undefined)?.rar ?? [])
          : [];
      const requested = requestedDetails(ctx);
      if (!requested) return granted.length > 0 ? granted : undefined;
      // RFC 9396 §6.1: a token request may narrow the details to some of those granted.
      const chosen = requested.map((r) => granted.find((g) => asRequested(g) === canonical(r)));
      if (chosen.some((d) => d === undefined)) {
        throw new errors.InvalidAuthorizationDetails(
          'authorization_details at the token endpoint must be among those granted',
        );
      }
      return chosen as AuthorizationDetail[];
    },
    async authorizationDetailsForIntrospection(_ctx, token) {
      return (token as { rar?: AuthorizationDetail[] }).rar;
    },
  };
}
