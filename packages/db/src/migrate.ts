import type { Knex } from 'knex';
import * as m001 from './migrations/001-users.js';
import * as m002 from './migrations/002-auth-server.js';
import * as m003 from './migrations/003-deny-list.js';
import * as m004 from './migrations/004-api-resources.js';
import * as m005 from './migrations/005-sessions-api-keys.js';
import * as m006 from './migrations/006-payments-events-uploads.js';
import * as m007 from './migrations/007-signing-key-activation.js';
import * as m008 from './migrations/008-partial-artifact-indexes.js';
import * as m009 from './migrations/009-subject-revocations-index.js';
import * as m010 from './migrations/010-refresh-rotation-parent.js';
import * as m011 from './migrations/011-logout-cutoff-milliseconds.js';
import * as m012 from './migrations/012-refresh-rotation-state.js';
import * as m013 from './migrations/013-mfa.js';
import * as m014 from './migrations/014-passkeys.js';
import * as m015 from './migrations/015-totp-enrolment-owner.js';
import * as m016 from './migrations/016-refresh-rotation-started.js';
import * as m017 from './migrations/017-refresh-rotation-count.js';
import * as m018 from './migrations/018-user-disabled.js';
import * as m019 from './migrations/019-account-mail.js';
import * as m024 from './migrations/024-event-actor.js';
import * as m025 from './migrations/025-payment-authorizations.js';
import * as m026 from './migrations/026-roles.js';
import * as m027 from './migrations/027-audit-actor.js';
import * as m028 from './migrations/028-mail-outbox-claims.js';
import * as m029 from './migrations/029-resource-servers.js';

interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

// Imported statically so one list works under tsx, jest and a bundle. Append; never reorder.
const migrations: ReadonlyArray<readonly [string, Migration]> = [
  ['001-users', m001],
  ['002-auth-server', m002],
  ['003-deny-list', m003],
  ['004-api-resources', m004],
  ['005-sessions-api-keys', m005],
  ['006-payments-events-uploads', m006],
  ['007-signing-key-activation', m007],
  ['008-partial-artifact-indexes', m008],
  ['009-subject-revocations-index', m009],
  ['010-refresh-rotation-parent', m010],
  ['011-logout-cutoff-milliseconds', m011],
  ['012-refresh-rotation-state', m012],
  ['013-mfa', m013],
  ['014-passkeys', m014],
  ['015-totp-enrolment-owner', m015],
  ['016-refresh-rotation-started', m016],
  ['017-refresh-rotation-count', m017],
  ['018-user-disabled', m018],
  ['019-account-mail', m019],
  ['024-event-actor', m024],
  ['025-payment-authorizations', m025],
  ['026-roles', m026],
  ['027-audit-actor', m027],
  ['028-mail-outbox-claims', m028],
  ['029-resource-servers', m029],
];

export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: () => Promise.resolve(migrations.map(([name]) => name)),
  getMigrationName: (name) => name,
  getMigration: (name) => {
    const found = migrations.find(([n]) => n === name);
    if (!found) throw new Error(`unknown migration ${name}`);
    return Promise.resolve(found[1]);
  },
};

export async function migrateLatest(db: Knex): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource })) as [number, string[]];
  return applied;
}
