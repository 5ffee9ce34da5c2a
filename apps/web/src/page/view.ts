/** What the page shows: every DOM write of the demo (index.html has the elements). */
import type { Order, SseEvent } from '@portcullis/client';
import type { Session } from './bff.js';

export const $ = <T extends HTMLElement = HTMLElement>(id: string): T => {
  const element = document.getElementById(id);
  if (!element) throw new Error(`index.html has no #${id}`);
  return element as T;
};

export function notice(message: string, kind: 'info' | 'error' = 'info'): void {
  const el = $('notice');
  el.textContent = message;
  el.className = kind === 'error' ? 'error' : '';
  el.hidden = !message;
}

export function showSignedOut(message?: string): void {
  $('loading').hidden = true;
  $('signed-in').hidden = true;
  $('session').hidden = true;
  $('signed-out').hidden = false;
  if (message) notice(message);
}

export function showSignedIn(session: Session): void {
  $('loading').hidden = true;
  $('signed-out').hidden = true;
  $('signed-in').hidden = false;
  $('session').hidden = false;
  const user = session.user;
  $('who').textContent = user?.email ?? user?.sub ?? 'signed in';
  $('profile-name').textContent = user?.name ?? '–';
  $('profile-email').textContent = user?.email ?? '–';
  showToken(session);
}

export function showToken(session: Session): void {
  const at = new Date(session.expiresAt).toLocaleTimeString();
  $('profile-token').textContent = `in memory, DPoP-bound, expires ${at}`;
}

export function showRoles(text: string): void {
  $('profile-roles').textContent = text;
}

export const money = (amount: number, currency: string): string => {
  try {
    return new Intl.NumberFormat(undefined, { style: 'currency', currency }).format(amount / 100);
  } catch {
    return `${amount} ${currency}`;
  }
};

function cell(text: string): HTMLTableCellElement {
  const td = document.createElement('td');
  td.textContent = text;
  return td;
}

export function showOrders(
  items: readonly Order[],
  paid: ReadonlySet<string>,
  onPay: (order: Order, button: HTMLButtonElement) => void,
): void {
  const rows = $('order-rows');
  rows.replaceChildren();
  $('orders-empty').hidden = items.length > 0;
  for (const order of items) {
    const tr = document.createElement('tr');
    tr.dataset['orderId'] = order.id;
    tr.append(
      cell(new Date(order.createdAt).toLocaleString()),
      cell(order.customer),
      cell(money(order.amount, order.currency)),
      cell(order.status),
    );
    const actions = document.createElement('td');
    if (paid.has(order.id)) {
      actions.textContent = 'paid';
    } else if (order.status === 'pending' || order.status === 'open') {
      const pay = document.createElement('button');
      pay.type = 'button';
      pay.className = 'small';
      pay.textContent = 'Pay';
      pay.addEventListener('click', () => onPay(order, pay));
      actions.append(pay);
    }
    tr.append(actions);
    rows.append(tr);
  }
}

export function showNoOrderAccess(): void {
  $('order-rows').replaceChildren();
  $('orders-empty').hidden = false;
  $('orders-empty').textContent = 'Your role may not read orders.';
}

export function showFieldErrors(fields: Record<string, string[]> | undefined): void {
  $('order-errors').textContent = Object.entries(fields ?? {})
    .map(([field, messages]) => `${field}: ${messages.join(', ')}`)
    .join(' · ');
}

export function streamStatus(text: string, kind: '' | 'live' | 'error' = ''): void {
  const el = $('stream-status');
  el.textContent = text;
  el.className = `badge ${kind}`;
}

/** An event of GET /stream, as the API sends it: `{type, subjectId, data}` in `data:`. */
export interface StreamPayload {
  type?: string;
  subjectId?: string;
  data?: Record<string, unknown>;
}

export function parseStreamEvent(event: SseEvent): StreamPayload | undefined {
  try {
    const payload = JSON.parse(event.data) as unknown;
    return typeof payload === 'object' && payload !== null ? (payload as StreamPayload) : undefined;
  } catch {
    return undefined;
  }
}

export function showEvent(event: SseEvent, payload: StreamPayload | undefined): void {
  const li = document.createElement('li');
  const name = document.createElement('code');
  name.textContent = payload?.type ?? event.event;
  const detail = document.createElement('span');
  const data = payload ? payload.data : event.data;
  const summary =
    data && typeof data === 'object'
      ? [
          data['customer'],
          data['status'],
          typeof data['amount'] === 'number'
            ? money(data['amount'], String(data['currency'] ?? 'EUR'))
            : null,
        ]
          .filter(Boolean)
          .join(' · ')
      : String(data ?? '');
  detail.textContent = ` ${summary || payload?.subjectId || ''}`;
  li.append(name, detail);
  $('stream-events').prepend(li);
}
