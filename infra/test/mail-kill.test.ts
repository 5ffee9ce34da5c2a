/**
 * "We sent you a link" holds across a SIGKILL: 20 concurrent POST /password/forgot to a real
 * auth-server process, killed the moment the last answer arrived; each of the 20 addresses
 * has its row in mail_outbox, which any instance sends (docs/mail.md "Requests"). On the
 * process's own PGlite under DATA_DIR, or a PostgreSQL database of its own with DATABASE_URL.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createDb } from '@portcullis/db';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';
import { freePort, startMailbox, type Mailbox } from '@portcullis/testing';
import { startService, stopService, waitReady, type Service } from './helpers/processes.js';

const USERS = 20;
const dataDir = mkdtempSync(path.join(tmpdir(), 'portcullis-mail-kill-'));
const ADMIN_TOKEN = randomBytes(32).toString('base64url');
let database: TestDatabase | undefined;
let mailbox: Mailbox | undefined;
const services: Service[] = [];

afterAll(async () => {
  await Promise.all(services.map((s) => stopService(s, 'SIGKILL')));
  await mailbox?.close();
  await database?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function startAuth(
  env: Record<string, string>,
): Promise<{ service: Service; admin: string }> {
  const [port, adminPort] = await Promise.all([freePort(), freePort()]);
  const service = await startService('apps/auth-server/src/main.ts', `http://127.0.0.1:${port}`, {
    ...env,
    AUTH_PORT: String(port),
    ADMIN_PORT: String(adminPort),
    ISSUER: `http://127.0.0.1:${port}`,
  });
  services.push(service);
  await waitReady(service);
  return { service, admin: `http://127.0.0.1:${adminPort}` };
}

/** The forgot form as a browser gets it: its nonce cookie and the CSRF value it carries. */
async function forgotForm(url: string) {
  const res = await fetch(`${url}/password/forgot`);
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
  const csrf = /name="csrf" value="([^"]+)"/.exec(await res.text())?.[1] ?? '';
  return { cookie, csrf };
}

describe('a SIGKILL right after /password/forgot answered', () => {
  it('loses no mail a page said was sent', async () => {
    if (process.env['DATABASE_URL']) database = await createTestDatabase();
    mailbox = await startMailbox();
    const redisUrl = process.env['REDIS_URL'];
    const env: Record<string, string> = {
      DATA_DIR: dataDir,
      ADMIN_TOKEN,
      SEED_DEMO: 'false',
      SMTP_URL: mailbox.url,
      ACCOUNT_MAIL_IP_LIMIT: '1000',
      COOKIE_KEYS: randomBytes(32).toString('base64url'),
      KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64url'),
      ...(database?.url ? { DATABASE_URL: database.url } : {}),
      ...(redisUrl ? { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: `mail-kill-${randomUUID()}:` } : {}),
    };
    const first = await startAuth(env);
    const emails = Array.from({ length: USERS }, (_, i) => `kill-${i}-${randomUUID()}@example.com`);
    for (const email of emails) {
      const res = await fetch(`${first.admin}/admin/users`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email, password: `pw-${randomUUID()}`, roles: [] }),
      });
      expect(res.status).toBe(201);
    }
    const forms = await Promise.all(emails.map(() => forgotForm(first.service.url)));
    const answers = await Promise.all(
      emails.map(async (email, i) => {
        const res = await fetch(`${first.service.url}/password/forgot`, {
          method: 'POST',
          headers: {
            cookie: forms[i]!.cookie,
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: new URLSearchParams({ csrf: forms[i]!.csrf, email }).toString(),
        });
        return { status: res.status, text: await res.text() };
      }),
    );
    first.service.child.kill('SIGKILL');
    await stopService(first.service, 'SIGKILL');
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.text).toContain('If an account exists for');
    }

    // What the process left: every address told "sent" has its row (a request or its mail).
    const db = database?.db ?? createDb({ dataDir });
    try {
      const rows: { recipient: string }[] = await db('mail_outbox')
        .whereIn('recipient', emails)
        .whereNull('failed_at')
        .select('recipient');
      const queued = new Set(rows.map((r) => r.recipient));
      expect(emails.filter((e) => !queued.has(e))).toEqual([]);
    } finally {
      if (!database) await db.destroy();
    }
  }, 180_000);
});
