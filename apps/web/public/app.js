// Portcullis browser demo. Plain ES module, no build step, no inline script (strict CSP).
//
// Token handling (spec §5 "Browser storage"):
// - the refresh token is in the BFF's HttpOnly `rt` cookie; this script never sees it;
// - the access token is kept in the `session` variable below and nowhere else (no
//   localStorage, no sessionStorage, no cookie); a reload gets a new one from
//   POST /auth/refresh, which rotates the refresh token;
// - refreshes are serialized: concurrent callers share the one in-flight request, so
//   this tab never presents a refresh token twice (the BFF does the same across tabs);
// - both tokens are DPoP-bound (RFC 9449) to a non-extractable key pair kept in IndexedDB:
//   this page signs a proof for each API call, and for each token request the BFF makes
//   (it forwards the proof to /token). A copied token is useless without the key, and
//   the key cannot be copied (README "DPoP in the browser demo").
// The API is called directly (CORS) with `Authorization: DPoP <access token>` and a proof.

import { createDpopKey, isUseDpopNonceChallenge } from './dpop.js';

const CSRF_HEADERS = { 'X-Requested-With': 'portcullis-web' };
/** Refresh this long before the access token expires. */
const EXPIRY_MARGIN_MS = 30_000;

const session = { accessToken: null, expiresAt: 0, user: null, refreshing: null };
let config = null;
let stream = null;
/** Orders paid while this page is open (from the payment response or a live event). */
const paidOrders = new Set();

const $ = (id) => document.getElementById(id);

class SignedOutError extends Error {}

class ApiProblem extends Error {
  constructor(status, body, retryAfter) {
    super(describeProblem(status, body, retryAfter));
    this.status = status;
    this.body = body;
  }
}

function describeProblem(status, body, retryAfter) {
  const code = body && typeof body === 'object' && body.error ? body.error : `http_${status}`;
  if (status === 403) return `Not allowed: your role lacks the permission for this (${code}).`;
  if (status === 404) return 'Not found.';
  if (status === 409) return `Conflict (${code}): reloaded, please try again.`;
  if (status === 422) return 'Please correct the highlighted fields.';
  if (status === 429) return `Too many requests: try again in ${retryAfter ?? 'a few'} seconds.`;
  if (status >= 500) return `The server failed (${code}). Try again shortly.`;
  return body?.message ?? `Request failed (${code}).`;
}

// ---------------------------------------------------------------- DPoP key

const KEY_DB = 'portcullis-demo';
const KEY_STORE = 'keys';
const KEY_ID = 'dpop';
let dpopKeyPromise = null;

/** One request on the key store; resolves with its result once the transaction is done. */
function keyStore(mode, operation) {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open(KEY_DB, 1);
    open.onupgradeneeded = () => open.result.createObjectStore(KEY_STORE);
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const tx = db.transaction(KEY_STORE, mode);
      const request = operation(tx.objectStore(KEY_STORE));
      tx.oncomplete = () => {
        db.close();
        resolve(request.result);
      };
      tx.onerror = () => {
        db.close();
        reject(tx.error);
      };
      tx.onabort = () => {
        db.close();
        reject(tx.error);
      };
    };
  });
}

/**
 * The page's DPoP key: the stored pair (a reload keeps the session's tokens usable), or a
 * new non-extractable one, stored with `add` so two tabs starting at once keep one key.
 */
function dpopKey() {
  dpopKeyPromise ??= (async () => {
    const stored = await keyStore('readonly', (store) => store.get(KEY_ID));
    if (stored) return createDpopKey({ keyPair: stored });
    const key = await createDpopKey();
    try {
      await keyStore('readwrite', (store) => store.add(key.keyPair, KEY_ID));
      return key;
    } catch {
      return createDpopKey({ keyPair: await keyStore('readonly', (store) => store.get(KEY_ID)) });
    }
  })();
  dpopKeyPromise.catch(() => {
    dpopKeyPromise = null;
  });
  return dpopKeyPromise;
}

/** Signing out ends the key too: the next sign-in binds its tokens to a new one. */
async function forgetDpopKey() {
  dpopKeyPromise = null;
  await keyStore('readwrite', (store) => store.delete(KEY_ID));
}

/**
 * fetch with `Authorization: DPoP` and a proof for this method and URL; a 401 asking for
 * a new nonce is retried once with it (RFC 9449 §9).
 */
async function dpopFetch(url, token, init) {
  const key = await dpopKey();
  for (let attempt = 0; ; attempt++) {
    const headers = {
      ...init.headers,
      Authorization: `DPoP ${token}`,
      DPoP: await key.proof(init.method ?? 'GET', url, { accessToken: token }),
    };
    const res = await fetch(url, { ...init, headers });
    const newNonce = key.updateNonce(url, res.headers);
    if (res.status === 401 && newNonce && attempt === 0 && isUseDpopNonceChallenge(res.headers))
      continue;
    return res;
  }
}

// ---------------------------------------------------------------- tokens

/**
 * POST /auth/refresh with a proof for the token endpoint (the BFF exchanges the sign-in's
 * code or rotates the refresh token with it); one retry when /token asks for a nonce.
 */
async function postRefresh() {
  const key = await dpopKey();
  for (let attempt = 0; ; attempt++) {
    const res = await fetch('/auth/refresh', {
      method: 'POST',
      headers: { ...CSRF_HEADERS, DPoP: await key.proof('POST', config.tokenUrl) },
      credentials: 'same-origin',
      cache: 'no-store',
    });
    const newNonce = key.updateNonce(config.tokenUrl, res.headers);
    if (res.status === 400 && newNonce && attempt === 0) continue;
    return res;
  }
}

/** POST /auth/refresh, at most one at a time. Resolves to the access token or null (signed out). */
function refreshAccessToken() {
  session.refreshing ??= (async () => {
    const res = await postRefresh();
    if (res.status === 401) {
      forgetSession();
      return null;
    }
    if (!res.ok) throw new Error(`The sign-in service is unavailable (${res.status}).`);
    const body = await res.json();
    session.accessToken = body.access_token;
    session.expiresAt = Date.now() + body.expires_in * 1000;
    if (body.user) session.user = body.user;
    renderToken();
    return session.accessToken;
  })().finally(() => {
    session.refreshing = null;
  });
  return session.refreshing;
}

async function accessToken() {
  if (session.accessToken && Date.now() < session.expiresAt - EXPIRY_MARGIN_MS)
    return session.accessToken;
  return refreshAccessToken();
}

function forgetSession() {
  session.accessToken = null;
  session.expiresAt = 0;
  session.user = null;
}

// ---------------------------------------------------------------- API calls

/** One API call; a 401 is answered by one refresh and one retry (spec §7). */
async function api(method, path, { body, headers = {} } = {}) {
  for (let attempt = 0; ; attempt++) {
    const token = await accessToken();
    if (!token) throw new SignedOutError();
    const res = await dpopFetch(config.apiUrl + path, token, {
      method,
      headers: {
        Accept: 'application/json',
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
    });
    if (res.status === 401 && attempt === 0) {
      if (session.accessToken === token) session.accessToken = null;
      continue;
    }
    if (res.status === 401) {
      forgetSession();
      throw new SignedOutError();
    }
    const text = await res.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = text;
    }
    if (!res.ok) throw new ApiProblem(res.status, data, res.headers.get('Retry-After'));
    return data;
  }
}

// ---------------------------------------------------------------- views

function notice(message, kind = 'info') {
  const el = $('notice');
  el.textContent = message;
  el.className = kind === 'error' ? 'error' : '';
  el.hidden = !message;
}

function handle(error) {
  if (error instanceof SignedOutError) {
    showSignedOut('Your session ended. Please sign in again.');
    return;
  }
  console.error(error);
  notice(error.message, 'error');
}

function showSignedOut(message) {
  stopStream();
  forgetSession();
  $('loading').hidden = true;
  $('signed-in').hidden = true;
  $('session').hidden = true;
  $('signed-out').hidden = false;
  if (message) notice(message);
}

function showSignedIn() {
  $('loading').hidden = true;
  $('signed-out').hidden = true;
  $('signed-in').hidden = false;
  $('session').hidden = false;
  const user = session.user ?? {};
  $('who').textContent = user.email ?? user.sub ?? 'signed in';
  $('profile-name').textContent = user.name ?? '–';
  $('profile-email').textContent = user.email ?? '–';
  renderToken();
}

function renderToken() {
  if (!session.accessToken) return;
  const at = new Date(session.expiresAt).toLocaleTimeString();
  $('profile-token').textContent = `in memory, DPoP-bound, expires ${at}`;
}

const money = (amount, currency) => {
  try {
    return new Intl.NumberFormat(undefined, { style: 'currency', currency }).format(amount / 100);
  } catch {
    return `${amount} ${currency}`;
  }
};

function cell(text) {
  const td = document.createElement('td');
  td.textContent = text;
  return td;
}

function renderOrders(items) {
  const rows = $('order-rows');
  rows.replaceChildren();
  $('orders-empty').hidden = items.length > 0;
  for (const order of items) {
    const tr = document.createElement('tr');
    tr.dataset.orderId = order.id;
    tr.append(
      cell(new Date(order.createdAt).toLocaleString()),
      cell(order.customer),
      cell(money(order.amount, order.currency)),
      cell(order.status),
    );
    const actions = document.createElement('td');
    if (paidOrders.has(order.id)) {
      actions.textContent = 'paid';
    } else if (order.status === 'pending' || order.status === 'open') {
      const pay = document.createElement('button');
      pay.type = 'button';
      pay.className = 'small';
      pay.textContent = 'Pay';
      pay.addEventListener('click', () => void payOrder(order, pay));
      actions.append(pay);
    }
    tr.append(actions);
    rows.append(tr);
  }
}

// ---------------------------------------------------------------- orders and payments

async function loadProfile() {
  if (!session.user?.sub) return;
  try {
    const user = await api('GET', `/users/${encodeURIComponent(session.user.sub)}`);
    $('profile-roles').textContent = user.roles?.join(', ') || 'none';
  } catch (error) {
    if (error instanceof SignedOutError) throw error;
    $('profile-roles').textContent = '(not visible to you)';
  }
}

async function loadOrders() {
  try {
    const page = await api('GET', '/orders?limit=20');
    renderOrders(page.items ?? []);
  } catch (error) {
    if (error instanceof ApiProblem && error.status === 403) {
      renderOrders([]);
      $('orders-empty').textContent = 'Your role may not read orders.';
      return;
    }
    throw error;
  }
}

async function createOrder(event) {
  event.preventDefault();
  const form = event.currentTarget;
  const data = new FormData(form);
  $('order-errors').textContent = '';
  const button = form.querySelector('button[type=submit]');
  button.disabled = true;
  try {
    const order = await api('POST', '/orders', {
      body: {
        customer: String(data.get('customer')).trim(),
        amount: Number(data.get('amount')),
        currency: String(data.get('currency')).trim().toUpperCase(),
      },
    });
    notice(`Order for ${order.customer} created.`);
    await loadOrders();
  } catch (error) {
    if (error instanceof ApiProblem && error.status === 422 && error.body?.fields) {
      $('order-errors').textContent = Object.entries(error.body.fields)
        .map(([field, messages]) => `${field}: ${messages.join(', ')}`)
        .join(' · ');
    }
    handle(error);
  } finally {
    button.disabled = false;
  }
}

/**
 * POST /payments with an Idempotency-Key made once per click: the automatic retry after
 * a refresh (and any retry of this same payment) reuses it, so the order is never
 * charged twice.
 */
async function payOrder(order, button) {
  const key = crypto.randomUUID();
  button.disabled = true;
  try {
    const payment = await api('POST', '/payments', {
      body: { orderId: order.id, amount: order.amount, currency: order.currency },
      headers: { 'Idempotency-Key': key },
    });
    if (payment.status === 'succeeded') paidOrders.add(order.id);
    notice(`Payment ${payment.status ?? 'sent'} for ${money(order.amount, order.currency)}.`);
    await loadOrders();
  } catch (error) {
    button.disabled = false;
    handle(error);
  }
}

// ---------------------------------------------------------------- live stream

/** Incremental SSE parser (WHATWG HTML §9.2): frames may split across chunks; CR, LF, CRLF. */
function sseParser(onEvent) {
  let buffer = '';
  let data = [];
  let type = '';
  let id;
  const line = (text) => {
    if (text === '') {
      if (data.length) onEvent({ id, event: type || 'message', data: data.join('\n') });
      data = [];
      type = '';
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') type = value;
    else if (field === 'id' && !value.includes('\0')) id = value;
  };
  return (chunk) => {
    buffer += chunk;
    // A trailing CR may be the first half of a CRLF split across chunks: hold it back.
    const heldCR = buffer.endsWith('\r');
    const lines = (heldCR ? buffer.slice(0, -1) : buffer).split(/\r\n|\r|\n/);
    buffer = lines.pop() + (heldCR ? '\r' : '');
    for (const l of lines) line(l);
  };
}

function streamStatus(text, kind = '') {
  const el = $('stream-status');
  el.textContent = text;
  el.className = `badge ${kind}`;
}

function showEvent(event) {
  let payload = event.data;
  try {
    payload = JSON.parse(event.data);
  } catch {
    // plain text event
  }
  const li = document.createElement('li');
  const name = document.createElement('code');
  name.textContent = payload?.type ?? event.event;
  const detail = document.createElement('span');
  const data = payload?.data ?? payload;
  if (payload?.type === 'payment.succeeded' && data?.orderId) paidOrders.add(data.orderId);
  const summary =
    data && typeof data === 'object'
      ? [
          data.customer,
          data.status,
          data.amount !== undefined ? money(data.amount, data.currency ?? 'EUR') : null,
        ]
          .filter(Boolean)
          .join(' · ')
      : String(data ?? '');
  detail.textContent = ` ${summary || payload?.subjectId || ''}`;
  li.append(name, detail);
  $('stream-events').prepend(li);
  if (
    String(name.textContent).startsWith('order.') ||
    String(name.textContent).startsWith('payment.')
  ) {
    void loadOrders().catch(() => {});
  }
}

function stopStream() {
  stream?.abort();
  stream = null;
  streamStatus('offline');
}

/** GET /stream over fetch with the DPoP-bound token; reconnects with Last-Event-ID and backoff. */
function startStream() {
  stopStream();
  const controller = new AbortController();
  stream = controller;
  let lastEventId;
  let failures = 0;
  let refreshed = false;

  const run = async () => {
    while (!controller.signal.aborted) {
      if (failures > 0) {
        const delay = Math.min(30_000, 1000 * 2 ** (failures - 1)) * (0.5 + Math.random() / 2);
        streamStatus('reconnecting…');
        await new Promise((resolve) => setTimeout(resolve, delay));
        if (controller.signal.aborted) return;
      }
      try {
        const token = await accessToken();
        if (!token) throw new SignedOutError();
        const headers = { Accept: 'text/event-stream' };
        if (lastEventId !== undefined) headers['Last-Event-ID'] = lastEventId;
        const res = await dpopFetch(`${config.apiUrl}/stream`, token, {
          headers,
          signal: controller.signal,
          cache: 'no-store',
        });
        if (res.status === 401 && !refreshed) {
          refreshed = true;
          if (session.accessToken === token) session.accessToken = null;
          continue;
        }
        if (res.status === 401) throw new SignedOutError();
        if (res.status === 204) return streamStatus('closed by server');
        if (res.status === 403 || res.status === 404) {
          return streamStatus(res.status === 404 ? 'not available' : 'not allowed', 'error');
        }
        if (!res.ok || !res.body) throw new Error(`stream answered ${res.status}`);
        refreshed = false;
        streamStatus('live', 'live');
        const feed = sseParser((event) => {
          failures = 0;
          if (event.id !== undefined) lastEventId = event.id;
          showEvent(event);
        });
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          feed(value);
        }
        failures++;
      } catch (error) {
        if (controller.signal.aborted) return;
        if (error instanceof SignedOutError) return handle(error);
        failures++;
        streamStatus('offline', 'error');
      }
    }
  };
  void run();
}

// ---------------------------------------------------------------- sign out

async function signOut() {
  stopStream();
  await fetch('/auth/logout', {
    method: 'POST',
    headers: CSRF_HEADERS,
    credentials: 'same-origin',
  });
  await forgetDpopKey();
  showSignedOut('You are signed out.');
}

/** Ends every session and token of this user at the API (POST /logout/all), then here. */
async function signOutEverywhere() {
  try {
    await api('POST', '/logout/all');
  } catch (error) {
    if (!(error instanceof SignedOutError)) return handle(error);
  }
  await signOut();
  notice('Signed out on every device: every access token issued so far is refused by the API.');
}

// ---------------------------------------------------------------- start

const SIGN_IN_ERRORS = {
  access_denied: 'Sign-in was cancelled.',
  sign_in_expired: 'The sign-in took too long or was started in another tab. Please try again.',
  state_mismatch: 'The sign-in response did not match this browser. Please try again.',
  issuer_mismatch: 'The sign-in response came from an unexpected server.',
  sign_in_failed: 'Sign-in failed. Please try again.',
};

async function start() {
  const params = new URLSearchParams(location.search);
  if (params.has('error')) {
    notice(SIGN_IN_ERRORS[params.get('error')] ?? SIGN_IN_ERRORS.sign_in_failed, 'error');
    history.replaceState(null, '', '/');
  }
  $('sign-out').addEventListener('click', () => void signOut().catch(handle));
  $('sign-out-everywhere').addEventListener('click', () => void signOutEverywhere().catch(handle));
  $('orders-reload').addEventListener('click', () => void loadOrders().catch(handle));
  $('order-form').addEventListener('submit', (event) => void createOrder(event));

  config = await (await fetch('/config.json', { cache: 'no-store' })).json();
  const token = await refreshAccessToken();
  if (!token) return showSignedOut();
  showSignedIn();
  startStream();
  await Promise.all([loadProfile(), loadOrders()]);
}

start().catch(handle);
