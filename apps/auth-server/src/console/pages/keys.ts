import { consoleOf, type ConsolePages } from '../kit.js';

/** /console/keys (docs/console.md). */
export function keyPages({ router }: ConsolePages): void {
  router.get('/console/keys', function showKeys(ctx) {
    const c = consoleOf(ctx);
    c.render(c.ui.t('console:nav.keys'), c.notice(), { section: 'keys' });
  });
}
