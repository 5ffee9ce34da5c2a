import { EVENT_TYPES, SUBJECT_TYPES } from '../data/events-repo.js';
import { z } from '../openapi/zod.js';
import { Limit } from './common.js';

// ISO 8601 date or date-time (Z or ±hh:mm), optionally followed by `~<event id>`: the
// tiebreak that nextBefore carries so events sharing a timestamp are neither skipped
// nor repeated across pages.
const BEFORE =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}))?(?:~(\d{1,18}))?$/;

/** The parts of a valid `before`, or undefined. */
export function parseBefore(value: string): { at: string; id?: string } | undefined {
  const m = BEFORE.exec(value);
  if (!m) return undefined;
  const [year, month, day, hour = '0', minute = '0', second = '0'] = m
    .slice(1, 7)
    .map((v) => v ?? '0') as string[];
  const days = new Date(Date.UTC(Number(year), Number(month), 0)).getUTCDate();
  const valid =
    Number(month) >= 1 &&
    Number(month) <= 12 &&
    Number(day) >= 1 &&
    Number(day) <= days &&
    Number(hour) <= 23 &&
    Number(minute) <= 59 &&
    Number(second) <= 59;
  if (!valid) return undefined;
  const tilde = value.indexOf('~');
  return tilde === -1 ? { at: value } : { at: value.slice(0, tilde), id: m[7] };
}

export const ListEventsQuery = z.object({
  before: z
    .string()
    .max(64)
    .refine(
      (v) => parseBefore(v) !== undefined,
      'must be an ISO 8601 timestamp (or a nextBefore value)',
    )
    .optional()
    .openapi({
      param: {
        description:
          'Only events strictly older than this ISO 8601 timestamp. Pass `nextBefore` of the previous page ' +
          'as is: it is the last item’s `createdAt` plus `~<id>`, so events with equal timestamps (ordered by id) ' +
          'are neither skipped nor repeated.',
      },
      example: '2025-01-31T12:00:00Z',
    }),
  limit: Limit,
});

export const EventSchema = z
  .object({
    id: z.string().openapi({ description: 'Increasing event id; the SSE `id:` of GET /stream' }),
    type: z.enum(EVENT_TYPES),
    subjectType: z.enum(SUBJECT_TYPES),
    subjectId: z.string(),
    data: z.unknown().openapi({
      description: 'The subject after the change (e.g. the order), or `{id}` when deleted',
    }),
    createdAt: z
      .string()
      .openapi({ description: 'ISO 8601, microseconds', example: '2025-01-31T12:00:00.123456Z' }),
    actor: z
      .array(z.string())
      .optional()
      .openapi({
        description:
          'RFC 8693: the services (client ids) that made the change for the owner with an exchanged ' +
          'token, the latest first; absent when the owner’s own client made it',
        example: ['order-service'],
      }),
  })
  .openapi('Event');

export const EventPageSchema = z
  .object({
    items: z.array(EventSchema),
    nextBefore: z
      .string()
      .nullable()
      .openapi({ description: 'Pass as `before` for older events; null at the end' }),
  })
  .openapi('EventPage');
