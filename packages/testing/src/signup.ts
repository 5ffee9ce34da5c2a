import type { Browser } from './cookie-jar.js';

const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

/** Opens /signup (with `interaction`, from a sign-in) and submits the form; the POST's answer. */
export async function signUp(
  issuer: string,
  b: Browser,
  person: { email: string; password: string },
  interaction?: string,
): Promise<Response> {
  const query = interaction ? `?interaction=${encodeURIComponent(interaction)}` : '';
  const form = await b.get(`${issuer}/signup${query}`);
  const html = await form.text();
  return b.postForm(`${issuer}/signup`, {
    csrf: csrfOf(html),
    email: person.email,
    password: person.password,
    ...(interaction ? { interaction } : {}),
  });
}

/** Opens a mailed confirmation link and presses its button; the POST's answer. */
export async function confirmAddress(b: Browser, link: string): Promise<Response> {
  const page = await b.get(link);
  const html = await page.text();
  if (page.status !== 200) return new Response(html, { status: page.status });
  const token = /name="token" value="([^"]+)"/.exec(html)?.[1] ?? '';
  const interaction = /name="interaction" value="([^"]+)"/.exec(html)?.[1];
  return b.postForm(new URL('/signup/verify', link).href, {
    csrf: csrfOf(html),
    token,
    ...(interaction ? { interaction } : {}),
  });
}
