import { markup, type SafeHtml } from '../../../identity/ui/html.js';
import { CONSOLE_PATH } from '../client.js';
import type { ConsoleRequest } from '../kit.js';
import type { ResourceView } from '../../api/resource-routes.js';

export type { ResourceView };

// What the APIs pages (resources.ts) and the role editor (roles.ts) are made of: the admin
// API's view of an API, its settings fields, and how the forms' text becomes a request.

export const APIS = `${CONSOLE_PATH}/apis`;
export const apiUrl = (id: string) => `${APIS}/${encodeURIComponent(id)}`;

/** GET /admin/resources: every registered API, the built-in one first. */
export const listResources = (c: ConsoleRequest) =>
  c.api.get<{ items: ResourceView[] }>('/admin/resources');

/** The signing algorithms of this server's keys (SIGNING_ALG); empty: the server's own. */
const ALGS = ['RS256', 'ES256'] as const;

/** The settings both forms show, as the form's text. */
export interface Settings {
  accessTokenTtl: string;
  signingAlg: string;
  dpopRequired: boolean;
  followsDenyList: boolean;
}

export const settingsOfForm = (f: Record<string, string>): Settings => ({
  accessTokenTtl: f['accessTokenTtl'] ?? '',
  signingAlg: f['signingAlg'] ?? '',
  dpopRequired: Boolean(f['dpopRequired']),
  followsDenyList: Boolean(f['followsDenyList']),
});

export const settingsOfResource = (r: ResourceView): Settings => ({
  accessTokenTtl: r.accessTokenTtl === null ? '' : String(r.accessTokenTtl),
  signingAlg: r.signingAlg ?? '',
  dpopRequired: r.dpopRequired,
  followsDenyList: r.followsDenyList,
});

/** Seconds as a number; other text goes as it is, for the admin API to name the problem. */
export function ttlOf(text: string): number | string | null {
  const value = text.trim();
  if (value === '') return null;
  return /^\d{1,9}$/.test(value) ? Number(value) : value;
}

/** "name description" lines: the name up to the first blank, the rest its description. */
export function permissionLines(text: string): { name: string; description?: string }[] {
  return text
    .split(/\r?\n/)
    .map((line) => /^(\S+)\s*(.*)$/.exec(line.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map(([, name, description]) => (description ? { name: name!, description } : { name: name! }));
}

const checkbox = (name: string, on: boolean, label: SafeHtml) =>
  markup`<label><input type="checkbox" name="${name}" value="1"${on ? ' checked' : ''}> ${label}</label>`;

/** The fields both forms share: token lifetime, signing algorithm, DPoP, the deny list. */
export function settingsFields(c: ConsoleRequest, v: Settings): SafeHtml {
  const algs = [...new Set<string>([...ALGS, ...(v.signingAlg ? [v.signingAlg] : [])])];
  const options = algs.map(
    (a) => markup`<option value="${a}"${a === v.signingAlg ? ' selected' : ''}>${a}</option>`,
  );
  return markup`<label for="api-ttl">${c.t('console:apis.accessTokenTtl')}</label>
<input type="number" id="api-ttl" name="accessTokenTtl" min="1" step="1" value="${v.accessTokenTtl}">
<label for="api-alg">${c.t('console:apis.signingAlg')}</label>
<select id="api-alg" name="signingAlg"><option value="">${c.t('console:apis.defaultAlg')}</option>${options}</select>
${checkbox('dpopRequired', v.dpopRequired, c.t('console:apis.dpopRequired'))}
${checkbox('followsDenyList', v.followsDenyList, c.t('console:apis.followsDenyList'))}`;
}
