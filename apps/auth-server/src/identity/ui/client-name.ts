import { ACCOUNT_CLIENT_ID } from '../account/account-page.js';
import type { Ui } from './index.js';

/** The name a page gives a client: the account page's in the page's language, else its own. */
export function clientDisplayName(
  ui: Pick<Ui, 't'>,
  client: { clientId: string; clientName?: string | undefined } | undefined,
): string {
  if (client?.clientId === ACCOUNT_CLIENT_ID) return ui.t('accountPage:title');
  return client?.clientName ?? client?.clientId ?? ui.t('common:anApplication');
}
