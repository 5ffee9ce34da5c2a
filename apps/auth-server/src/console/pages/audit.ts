import { consoleOf, type ConsolePages } from '../kit.js';

/** /console/audit (docs/console.md). */
export function auditPages({ router }: ConsolePages): void {
  router.get('/console/audit', function showAudit(ctx) {
    const c = consoleOf(ctx);
    c.render(c.ui.t('console:nav.audit'), c.notice(), { section: 'audit' });
  });
}
