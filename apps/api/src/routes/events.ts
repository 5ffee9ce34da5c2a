import { hasPermission, type Principal } from '@portcullis/claims';
import type { EventRecord, EventVisibility, SubjectType } from '../data/events-repo.js';
import { principalOf } from '../middleware/authenticate.js';
import { defineRoute, type ApiRouter } from '../openapi/define-route.js';
import { EventPageSchema, ListEventsQuery, parseBefore } from '../schemas/events.js';
import type { RouteDeps } from './deps.js';
import { Perm } from '../permissions.js';

/** The wildcard that lets an admin see every event of a subject type. */
const ADMIN_OF: Record<SubjectType, string> = {
  order: Perm.OrdersAll,
  payment: Perm.PaymentsAll,
  upload: Perm.UploadsAll,
  user: Perm.UsersAll,
};

/** Event visibility: own events, plus every event of a type whose wildcard the caller holds. */
export function eventVisibility(principal: Principal): EventVisibility {
  const subjectTypes = (Object.keys(ADMIN_OF) as SubjectType[]).filter((type) =>
    hasPermission(principal.permissions, ADMIN_OF[type]),
  );
  return { ownerId: principal.subject, subjectTypes };
}

export function canSee(visibility: EventVisibility, event: EventRecord): boolean {
  return (
    event.ownerId === visibility.ownerId || visibility.subjectTypes.includes(event.subjectType)
  );
}

export function eventJson(event: EventRecord) {
  return {
    id: event.id,
    type: event.type,
    subjectType: event.subjectType,
    subjectId: event.subjectId,
    data: event.data,
    createdAt: event.createdAt,
    ...(event.actor ? { actor: event.actor } : {}),
  };
}

export function eventsRoutes(api: ApiRouter, deps: RouteDeps): void {
  defineRoute(
    api,
    {
      method: 'get',
      path: '/events',
      operationId: 'listEvents',
      summary: 'Event feed, newest first (time cursor `before`)',
      tags: ['events'],
      permission: Perm.EventsRead,
      request: { query: ListEventsQuery },
      responses: {
        200: {
          description: 'A page of events',
          content: { 'application/json': { schema: EventPageSchema } },
        },
      },
    },
    async function listEvents(ctx, { query }) {
      const principal = principalOf(ctx);
      const before = query.before === undefined ? undefined : parseBefore(query.before);
      const rows = await deps.repos.events.list(eventVisibility(principal), {
        before,
        limit: query.limit + 1,
      });
      const items = rows.slice(0, query.limit);
      const last = items.at(-1);
      ctx.body = {
        items: items.map(eventJson),
        nextBefore: rows.length > query.limit && last ? `${last.createdAt}~${last.id}` : null,
      };
    },
  );
}
