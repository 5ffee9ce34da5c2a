import { consoleOf, type ConsolePages } from '../kit.js';

/** /console/roles (docs/console.md). */
export function rolePages({ router }: ConsolePages): void {
  router.get('/console/roles', function showRoles(ctx) {
    const c = consoleOf(ctx);
    c.render(c.ui.t('console:nav.roles'), c.notice(), { section: 'roles' });
  });
}
