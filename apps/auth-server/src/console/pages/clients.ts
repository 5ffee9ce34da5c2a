import { consoleOf, type ConsolePages } from '../kit.js';

/** /console/clients (docs/console.md). */
export function clientPages({ router }: ConsolePages): void {
  router.get('/console/clients', function showClients(ctx) {
    const c = consoleOf(ctx);
    c.render(c.ui.t('console:nav.clients'), c.notice(), { section: 'clients' });
  });
}
