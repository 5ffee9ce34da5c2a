import { consoleOf, type ConsolePages } from '../kit.js';

/** /console/users (docs/console.md). */
export function userPages({ router }: ConsolePages): void {
  router.get('/console/users', function showUsers(ctx) {
    const c = consoleOf(ctx);
    c.render(c.ui.t('console:nav.users'), c.notice(), { section: 'users' });
  });
}
