import type { Brand, Ui } from '../../identity/ui/index.js';
import { markup, translated, unsafeHtml, type SafeHtml } from '../../identity/ui/html.js';
import { CONSOLE_PATH } from './client.js';

/** The console's sections, in the order of its navigation. */
export const SECTIONS = ['status', 'clients', 'users', 'apis', 'roles', 'keys', 'audit'] as const;
export type Section = (typeof SECTIONS)[number];

/** Wider than the sign-in pages: the console shows tables. Colours are the brand's (validated). */
const style = (brand: Brand) =>
  // Raw text in <style>: escaping would change it, and only the validated colours come in.
  unsafeHtml(`body{font-family:system-ui,sans-serif;background:${brand.backgroundColor};margin:0;color:#222}
header{display:flex;align-items:center;gap:16px;padding:10px 24px;background:#fff;box-shadow:0 1px 3px rgba(0,0,0,.15)}
header img{max-height:32px}header .brand{font-weight:600}header nav{display:flex;gap:14px;flex:1}
header nav a{text-decoration:none}header nav a[aria-current=page]{font-weight:700;text-decoration:underline}
header form{margin:0}header button{margin:0}
main{max-width:1100px;margin:20px auto;background:#fff;padding:20px 28px;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.15)}
h1{font-size:1.4em;margin-top:0}h2{font-size:1.15em;margin-top:24px}a{color:${brand.primaryColor}}
table{border-collapse:collapse;width:100%;margin:8px 0}th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #e5e5e5;vertical-align:top}
th{font-size:.85em;color:#555}td form{display:inline}
label{display:block;margin:10px 0 4px}fieldset{border:1px solid #ddd;margin:10px 0}
input[type=text],input[type=email],input[type=password],input[type=search],input[type=url],input[type=datetime-local],select,textarea{box-sizing:border-box;padding:6px;font-size:.95em;min-width:280px}
textarea{width:100%;min-height:80px}
button{padding:6px 14px;font-size:.95em;cursor:pointer;background:${brand.primaryColor};color:#fff;border:1px solid ${brand.primaryColor};border-radius:4px;margin-top:8px}
button.danger{background:#b00020;border-color:#b00020}button.link{background:none;color:${brand.primaryColor};border:none;padding:0;margin:0;text-decoration:underline}
.error{color:#b00020}.notice{background:#e8f5e9;padding:8px 12px;border-radius:4px}.alert{background:#fdecea}
.muted{color:#666;font-size:.9em}.secret{font-family:monospace;background:#fff8e1;padding:8px;word-break:break-all}
.inline{display:flex;gap:8px;align-items:flex-end;flex-wrap:wrap}.inline label{margin:0}
.checks{display:grid;grid-template-columns:repeat(auto-fill,minmax(180px,1fr))}.checks label{margin:4px 0}
.nowrap{white-space:nowrap}.wrap{overflow-wrap:anywhere}`);

/** The console's layout: navigation, who is signed in, sign-out; the response body. */
export function consoleLayout(
  ui: Ui,
  input: { title: SafeHtml; body: SafeHtml; section?: Section; email?: string; csrf?: string },
): string {
  const { brand } = ui;
  const t = translated(ui.t);
  const logo = brand.logoUrl ? markup`<img src="${brand.logoUrl}" alt="">` : '';
  const nav = input.email
    ? markup`<nav>${SECTIONS.map(
        (s) =>
          markup`<a href="${CONSOLE_PATH}/${s}"${s === input.section ? markup` aria-current="page"` : ''}>${t(`console:nav.${s}`)}</a>`,
      )}</nav>
<span class="muted">${input.email}</span>
<form method="post" action="${CONSOLE_PATH}/sign-out"><input type="hidden" name="csrf" value="${input.csrf}"><button type="submit" class="link">${t('console:signOut')}</button></form>`
    : '';
  return markup`<!DOCTYPE html>
<html lang="${ui.language}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${input.title} – ${t('console:name', { product: brand.productName })}</title><style>${style(brand)}</style></head>
<body><header>${logo}<span class="brand">${t('console:name', { product: brand.productName })}</span>${nav}</header>
<main><h1>${input.title}</h1>
${input.body}
</main></body></html>`.toString();
}
