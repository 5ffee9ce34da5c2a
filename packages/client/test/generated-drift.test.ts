// CI guard of src/generated/openapi.ts: regenerates the types in memory from the API's
// current OpenAPI document and requires the checked-in file to be identical, so a change
// of the API's schemas cannot land without `pnpm client:generate` (and the type errors
// it then shows in src/types.ts and the resources).
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { createApiApp, openApiDocument, parseApiConfig } from '@portcullis/api';
import { pino } from 'pino';
import {
  currentApiDocument,
  GENERATED_FILE,
  generateTypes,
  REGENERATE_COMMAND,
} from '../scripts/openapi-types.js';
import type {
  ApiKey,
  ApiKeyPage,
  CursorPage,
  EventItem,
  EventPage,
  OffsetPage,
  Order,
  OrderPage,
  Payment,
  PaymentPage,
  TimePage,
  User,
  UserPage,
} from '../src/index.js';

/** First differing line, so the failure shows what changed without a 2500-line diff. */
function firstDifference(expected: string, actual: string): string {
  const a = expected.split('\n');
  const b = actual.split('\n');
  const i = a.findIndex((line, n) => line !== b[n]);
  const at = i === -1 ? a.length : i;
  return `line ${at + 1}:\n  checked in: ${JSON.stringify(b[at])}\n  generated:  ${JSON.stringify(a[at])}`;
}

describe('src/generated/openapi.ts', () => {
  it('equals the types generated from the current API document, byte for byte', async () => {
    const expected = await generateTypes(currentApiDocument());
    const checkedIn = await readFile(GENERATED_FILE, 'utf8').catch(() => '');
    if (checkedIn !== expected) {
      throw new Error(
        `${GENERATED_FILE} is out of date with the API's OpenAPI document.\n` +
          `Run \`${REGENERATE_COMMAND}\` (= pnpm --filter @portcullis/client generate), ` +
          `fix the type errors it reveals, and commit the result.\n` +
          firstDifference(expected, checkedIn),
      );
    }
    expect(checkedIn).toBe(expected);
  });

  it('is generated from the document GET /openapi.json serves', async () => {
    // The same construction as the server's; handlers never touch the stub dependencies.
    const config = parseApiConfig({});
    const app = createApiApp(config, {
      db: {} as never,
      logger: pino({ level: 'silent' }),
      resolvers: [],
      denyList: {} as never,
      eventBus: {} as never,
      storage: {} as never,
    });
    const server = createServer(app.callback()).listen(0, '127.0.0.1');
    try {
      await new Promise((resolve) => server.once('listening', resolve));
      const { port } = server.address() as AddressInfo;
      const served: unknown = await (await fetch(`http://127.0.0.1:${port}/openapi.json`)).json();
      expect(served).toEqual(openApiDocument(config));
    } finally {
      server.close();
    }
  });

  it('keeps the generated pages instances of the generic envelopes', () => {
    // Compile-time: tsc rejects these assignments when a page stops matching.
    const pages: [
      OffsetPage<Order>,
      CursorPage<User>,
      CursorPage<Payment>,
      CursorPage<ApiKey>,
      TimePage<EventItem>,
    ] = [
      { items: [], total: 0, page: 1, limit: 20 } satisfies OrderPage,
      { items: [], nextCursor: null } satisfies UserPage,
      { items: [], nextCursor: null } satisfies PaymentPage,
      { items: [], nextCursor: null } satisfies ApiKeyPage,
      { items: [], nextBefore: null } satisfies EventPage,
    ];
    expect(pages).toHaveLength(5);
  });
});
