import type { Middleware, ParameterizedContext } from 'koa';
import type Router from '@koa/router';
import type { OpenAPIRegistry, ResponseConfig, RouteConfig } from '@asteasolutions/zod-to-openapi';
import {
  authorize,
  permissionRefusal,
  resolveAuthorization,
  stepUpError,
  stepUpShortfall,
  type ChallengeSettings,
  type StepUpRequirement,
} from '@portcullis/claims';
import type { ApiConfig } from '../config.js';
import { ForbiddenError, NotFoundError } from '../errors.js';
import { parseBody, parseQuery } from '../http/validate.js';
import { principalOf, type ApiState, type Authenticate } from '../middleware/authenticate.js';
import { z } from './zod.js';
import { ErrorSchema, StepUpErrorSchema, ValidationErrorSchema } from '../schemas/common.js';
import type { Permission } from '../permissions.js';

/** A router whose routes are described in the OpenAPI registry as they are mounted. */
export interface ApiRouter {
  router: Router<ApiState>;
  registry: OpenAPIRegistry;
  authenticate: Authenticate;
  /** README "Step-up": whether step-up rules are enforced, and their configured values. */
  stepUp: ApiConfig['stepUp'];
  /** How the API presents itself in its challenges (auth/challenge.ts apiChallengeOf). */
  challenge: ChallengeSettings;
}

type EmptyObject = z.ZodObject<Record<string, never>>;

export interface RouteSpec<P extends z.ZodObject, Q extends z.ZodObject, B extends z.ZodType> {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** Koa style (`/orders/:id`); the OpenAPI path is derived. */
  path: string;
  operationId: string;
  summary: string;
  tags: string[];
  /** The permission, enforced before the input is read; also the route's OAuth scope (its challenges name it). */
  permission?: Permission;
  /** The sign-in required besides the permission (README "Step-up"). Needs `permission`. */
  stepUp?: StepUpRule<P, Q, B>;
  request?: { params?: P; query?: Q; body?: B; headers?: z.ZodObject };
  responses: Record<number, ResponseConfig>;
}

export interface RouteInput<P extends z.ZodObject, Q extends z.ZodObject, B extends z.ZodType> {
  params: z.output<P>;
  query: z.output<Q>;
  body: z.output<B>;
  permission: Permission | undefined;
}

/** A minimum `acr` and maximum sign-in age (RFC 9470), optionally only for some inputs. */
export interface StepUpRule<
  P extends z.ZodObject,
  Q extends z.ZodObject,
  B extends z.ZodType,
> extends StepUpRequirement {
  /** Only when the validated input satisfies `applies` (e.g. a payment above an amount). */
  when?: { description: string; applies: (input: RouteInput<P, Q, B>) => boolean };
}

export type RouteHandler<P extends z.ZodObject, Q extends z.ZodObject, B extends z.ZodType> = (
  ctx: ParameterizedContext<ApiState>,
  input: RouteInput<P, Q, B>,
) => Promise<void> | void;

const json = (schema: z.ZodType, description: string): ResponseConfig => ({
  description,
  content: { 'application/json': { schema } },
});

/** Error responses every route of a kind can give, so definitions list only their own. */
function standardResponses(
  spec: RouteSpec<z.ZodObject, z.ZodObject, z.ZodType>,
): Record<number, ResponseConfig> {
  const out: Record<number, ResponseConfig> = {};
  if (spec.permission) {
    out[401] = json(ErrorSchema, 'Missing or invalid credential (`WWW-Authenticate: Bearer`)');
    out[403] = json(
      ErrorSchema,
      'Authenticated but lacking the permission: exactly `{"error":"forbidden"}`',
    );
  }
  if (spec.stepUp) {
    out[401] = {
      description:
        'Missing or invalid credential (`WWW-Authenticate: Bearer`), or ' +
        '`insufficient_user_authentication`: sign in again with `acr_values` and `max_age` ' +
        '(RFC 9470; README "Step-up")',
      content: {
        'application/json': { schema: z.union([ErrorSchema, StepUpErrorSchema]) },
      },
    };
    out[403] = json(
      ErrorSchema,
      'Lacking the permission, or a credential that is no user sign-in (API key, client ' +
        'credentials): exactly `{"error":"forbidden"}`',
    );
  }
  if (spec.request?.params)
    out[404] = json(ErrorSchema, 'No such resource, or not visible to the caller');
  if (spec.request?.body) {
    out[400] = json(ErrorSchema, 'Malformed JSON (`malformed_json`)');
    out[413] = json(ErrorSchema, 'Body too large');
    out[415] = json(ErrorSchema, 'Body is not application/json');
  }
  if (spec.request?.body || spec.request?.query)
    out[422] = json(ValidationErrorSchema, 'Validation failed');
  return out;
}

/** The route's step-up rule as shown in the document (`x-portcullis-step-up`). */
function stepUpExtension(rule: StepUpRule<z.ZodObject, z.ZodObject, z.ZodType>) {
  return {
    acr_values: rule.acr,
    ...(rule.maxAgeSec === undefined ? {} : { max_age: rule.maxAgeSec }),
    ...(rule.when ? { when: rule.when.description } : {}),
  };
}

function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

// Built once: zod compiles a schema on its first parse.
const NO_QUERY = z.strictObject({});

export const SECURITY_SCHEMES = ['oauth2', 'bearerJwt', 'apiKey', 'sessionCookie'] as const;

/**
 * Authenticate, then the permission: a caller lacking it gets 403 whatever it sent (no 422/404).
 * Both refusals name the permission as the scope to ask for (docs/api-contracts.md "Scope in challenges").
 */
export function guardsOf(
  api: ApiRouter,
  permission: Permission | undefined,
): Middleware<ApiState>[] {
  if (!permission) return [];
  const requireRoutePermission: Middleware<ApiState> = async function requireRoutePermission(
    ctx,
    next,
  ) {
    const principal = principalOf(ctx);
    if (!authorize(principal, permission)) {
      const scheme = resolveAuthorization(ctx.get('Authorization') || undefined)?.scheme;
      throw permissionRefusal(principal, permission, { settings: api.challenge, scheme });
    }
    await next();
  };
  return [api.authenticate.requiring(permission), requireRoutePermission];
}

/** RFC 9470: throws unless the sign-in meets `rule`; a credential with no user sign-in gets 403. */
export function requireStepUp(
  ctx: ParameterizedContext<ApiState>,
  rule: StepUpRequirement,
  challenge: ChallengeSettings,
): void {
  const shortfall = stepUpShortfall(principalOf(ctx), rule);
  if (shortfall === undefined) return;
  if (shortfall === 'no_user_sign_in') throw new ForbiddenError('step-up: no user sign-in');
  const scheme = resolveAuthorization(ctx.get('Authorization') || undefined)?.scheme ?? 'Bearer';
  throw stepUpError(challenge, shortfall, rule, scheme);
}

function stepUpGuardOf(
  api: ApiRouter,
  rule: StepUpRule<z.ZodObject, z.ZodObject, z.ZodType> | undefined,
): Middleware<ApiState>[] {
  if (!rule || rule.when || !api.stepUp.enforced) return [];
  const requireRouteStepUp: Middleware<ApiState> = async function requireRouteStepUp(ctx, next) {
    requireStepUp(ctx, rule, api.challenge);
    await next();
  };
  return [requireRouteStepUp];
}

/** Mounts a route and its OpenAPI description (docs/architecture.md#the-request-path-at-the-api). */
export function defineRoute<
  P extends z.ZodObject = EmptyObject,
  Q extends z.ZodObject = EmptyObject,
  B extends z.ZodType = z.ZodUndefined,
>(api: ApiRouter, spec: RouteSpec<P, Q, B>, handler: RouteHandler<P, Q, B>): void {
  const { params, query, body, headers } = spec.request ?? {};
  const route: RouteConfig = {
    method: spec.method,
    path: openApiPath(spec.path),
    operationId: spec.operationId,
    summary: spec.summary,
    tags: spec.tags,
    security: spec.permission
      ? SECURITY_SCHEMES.map((name) => ({ [name]: name === 'oauth2' ? [spec.permission!] : [] }))
      : [],
    request: {
      ...(params ? { params } : {}),
      ...(query ? { query } : {}),
      ...(headers ? { headers } : {}),
      ...(body
        ? { body: { required: true, content: { 'application/json': { schema: body } } } }
        : {}),
    },
    responses: {
      ...standardResponses(spec as RouteSpec<z.ZodObject, z.ZodObject, z.ZodType>),
      ...spec.responses,
    },
  };
  if (spec.stepUp && !spec.permission) {
    throw new TypeError(`${spec.operationId}: a step-up rule needs a permission`);
  }
  if (spec.permission) route['x-permission'] = spec.permission;
  if (spec.stepUp) {
    route['x-portcullis-step-up'] = stepUpExtension(
      spec.stepUp as StepUpRule<z.ZodObject, z.ZodObject, z.ZodType>,
    );
  }
  api.registry.registerPath(route);
  const conditionalStepUp = api.stepUp.enforced ? spec.stepUp?.when && spec.stepUp : undefined;

  const validate: Middleware<ApiState> = async function validateInput(ctx) {
    const input = {
      params: {} as z.output<P>,
      query: {} as z.output<Q>,
      body: undefined as z.output<B>,
      permission: spec.permission,
    };
    if (params) {
      // A malformed id names no resource: 404, the same answer as an unknown one.
      const parsed = params.safeParse(ctx.params);
      if (!parsed.success) throw new NotFoundError();
      input.params = parsed.data as z.output<P>;
    }
    if (query) input.query = parseQuery(query, ctx.query) as z.output<Q>;
    else if (ctx.querystring !== '') input.query = parseQuery(NO_QUERY, ctx.query) as z.output<Q>;
    if (body) input.body = parseBody(body, ctx.request.body);
    if (conditionalStepUp?.when?.applies(input))
      requireStepUp(ctx, conditionalStepUp, api.challenge);
    await handler(ctx, input);
  };
  Object.defineProperty(validate, 'name', { value: spec.operationId });

  const chain = [
    ...guardsOf(api, spec.permission),
    ...stepUpGuardOf(api, spec.stepUp as StepUpRule<z.ZodObject, z.ZodObject, z.ZodType>),
    validate,
  ];
  api.router.register(spec.path, [spec.method.toUpperCase()], chain as never, {
    name: spec.operationId,
  });
}
