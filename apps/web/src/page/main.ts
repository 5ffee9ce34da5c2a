/** The browser demo's page on the client SDK (apps/web/README.md#how-tokens-are-held). */
import {
  ApiError,
  createPortcullisClient,
  StepUpRequiredError,
  UnauthorizedError,
  type Order,
  type PortcullisClient,
} from '@portcullis/client';
import {
  createBffSession,
  loadPageConfig,
  SignInUnavailableError,
  type BffSession,
  type Session,
  type SignedInUser,
} from './bff.js';
import { forgetDpopKey, loadDpopKey } from './key-store.js';
import { liveEvents } from './live-events.js';
import { stepUp, takePendingAction, type PendingPayment } from './step-up.js';
import * as view from './view.js';

/** A new access token is fetched this long before the current one expires. */
const EXPIRY_MARGIN_MS = 30_000;

const SIGN_IN_ERRORS: Record<string, string> = {
  access_denied: 'Sign-in was cancelled.',
  sign_in_expired: 'The sign-in took too long or was started in another tab. Please try again.',
  state_mismatch: 'The sign-in response did not match this browser. Please try again.',
  issuer_mismatch: 'The sign-in response came from an unexpected server.',
  sign_in_failed: 'Sign-in failed. Please try again.',
};

function describe(error: unknown): string {
  if (!(error instanceof ApiError)) return (error as Error).message ?? String(error);
  const { status, error: code } = error;
  if (status === 403) return `Not allowed: your role lacks the permission for this (${code}).`;
  if (status === 404) return 'Not found.';
  if (status === 409) return `Conflict (${code}): reloaded, please try again.`;
  if (status === 422) return 'Please correct the highlighted fields.';
  if (status === 429) {
    const seconds =
      error.retryAfterMs === undefined ? 'a few' : Math.ceil(error.retryAfterMs / 1000);
    return `Too many requests: try again in ${seconds} seconds.`;
  }
  if (status >= 500) return `The server failed (${code}). Try again shortly.`;
  return error.detail ?? `Request failed (${code}).`;
}

function demo(bff: BffSession, client: PortcullisClient) {
  /** Orders paid while this page is open (from the payment response or a live event). */
  const paidOrders = new Set<string>();
  let user: SignedInUser | undefined;
  let expiry: ReturnType<typeof setTimeout> | undefined;
  const stream = liveEvents(client, {
    onEvent(_event, payload) {
      const type = payload?.type ?? '';
      const orderId = payload?.data?.['orderId'];
      if (type === 'payment.succeeded' && typeof orderId === 'string') paidOrders.add(orderId);
      if (type.startsWith('order.') || type.startsWith('payment.')) {
        void loadOrders().catch(() => {});
      }
    },
    onSignedOut: (error) => handle(error),
  });

  function adopt(session: Session): void {
    user = session.user ?? user;
    client.setAccessToken(session.accessToken);
    view.showToken(session);
    clearTimeout(expiry);
    const wait = session.expiresAt - Date.now() - EXPIRY_MARGIN_MS;
    expiry = setTimeout(() => client.setAccessToken(undefined), Math.max(0, wait));
  }

  async function refresh(): Promise<string | undefined> {
    const session = await bff.refresh();
    if (session) adopt(session);
    return session?.accessToken;
  }

  function handle(error: unknown): void {
    if (error instanceof UnauthorizedError) {
      if (error.cause instanceof SignInUnavailableError)
        return view.notice(error.cause.message, 'error');
      return signedOut('Your session ended. Please sign in again.');
    }
    console.error(error);
    view.notice(describe(error), 'error');
  }

  function signedOut(message?: string): void {
    stream.stop();
    clearTimeout(expiry);
    client.setAccessToken(undefined);
    client.clearCache();
    user = undefined;
    view.showSignedOut(message);
  }

  async function loadProfile(): Promise<void> {
    if (!user?.sub) return;
    try {
      const profile = await client.users.get(user.sub);
      view.showRoles(profile.roles.join(', ') || 'none');
    } catch (error) {
      if (error instanceof UnauthorizedError) throw error;
      view.showRoles('(not visible to you)');
    }
  }

  async function loadOrders(): Promise<void> {
    try {
      const page = await client.orders.list({ limit: 20 });
      view.showOrders(page.items, paidOrders, (order, button) => void payOrder(order, button));
    } catch (error) {
      if (error instanceof ApiError && error.status === 403) return view.showNoOrderAccess();
      throw error;
    }
  }

  async function createOrder(form: HTMLFormElement): Promise<void> {
    const data = new FormData(form);
    view.showFieldErrors(undefined);
    const button = form.querySelector<HTMLButtonElement>('button[type=submit]')!;
    button.disabled = true;
    try {
      const order = await client.orders.create({
        customer: String(data.get('customer')).trim(),
        amount: Number(data.get('amount')),
        currency: String(data.get('currency')).trim().toUpperCase(),
      });
      view.notice(`Order for ${order.customer} created.`);
      await loadOrders();
    } catch (error) {
      if (error instanceof ApiError && error.status === 422) view.showFieldErrors(error.fields);
      handle(error);
    } finally {
      button.disabled = false;
    }
  }

  /** POST /payments with one Idempotency-Key per click: retries and the step-up retry reuse it. */
  async function pay(payment: PendingPayment, resumed: boolean): Promise<void> {
    const { orderId, amount, currency, idempotencyKey } = payment;
    try {
      const paid = await client.payments.create({ orderId, amount, currency }, { idempotencyKey });
      if (paid.status === 'succeeded') paidOrders.add(orderId);
      view.notice(`Payment ${paid.status} for ${view.money(amount, currency)}.`);
      await loadOrders();
    } catch (error) {
      if (!(error instanceof StepUpRequiredError)) throw error;
      if (!resumed) return stepUp(payment, error);
      view.notice(
        `This payment needs a stronger sign-in (${error.acrValues.join(' ')}) than the one ` +
          'you just made, so it was not made.',
        'error',
      );
    }
  }

  async function payOrder(order: Order, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    const payment: PendingPayment = {
      kind: 'payment',
      orderId: order.id,
      amount: order.amount,
      currency: order.currency,
      idempotencyKey: crypto.randomUUID(),
    };
    try {
      await pay(payment, false);
    } catch (error) {
      button.disabled = false;
      handle(error);
    }
  }

  async function signOut(): Promise<void> {
    stream.stop();
    await bff.signOut();
    await forgetDpopKey();
    signedOut('You are signed out.');
  }

  async function signOutEverywhere(): Promise<void> {
    try {
      await client.request({ method: 'POST', path: '/logout/all' });
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) return handle(error);
    }
    await signOut();
    view.notice(
      'Signed out on every device: every access token issued so far is refused by the API.',
    );
  }

  return {
    refresh,
    handle,
    wire(): void {
      view.$('sign-out').addEventListener('click', () => void signOut().catch(handle));
      view
        .$('sign-out-everywhere')
        .addEventListener('click', () => void signOutEverywhere().catch(handle));
      view.$('orders-reload').addEventListener('click', () => void loadOrders().catch(handle));
      view.$<HTMLFormElement>('order-form').addEventListener('submit', (event) => {
        event.preventDefault();
        void createOrder(event.currentTarget as HTMLFormElement);
      });
    },
    /** Signs in from the BFF's session (or shows signed out), then resumes a step-up's action. */
    async start(signInError: string | null): Promise<void> {
      const session = await bff.refresh();
      const pending = takePendingAction();
      if (!session) return signedOut();
      adopt(session);
      view.showSignedIn(session);
      stream.start();
      await Promise.all([loadProfile(), loadOrders()]);
      // A step-up sign-in that was cancelled or failed leaves its action undone.
      if (pending && signInError === null) {
        view.notice('Signed in again: making the payment.');
        await pay(pending, true);
      }
    },
  };
}

async function main(): Promise<void> {
  const params = new URLSearchParams(location.search);
  const signInError = params.get('error');
  if (signInError !== null) {
    view.notice(SIGN_IN_ERRORS[signInError] ?? SIGN_IN_ERRORS['sign_in_failed']!, 'error');
    history.replaceState(null, '', '/');
  }
  const [config, key] = await Promise.all([loadPageConfig(), loadDpopKey()]);
  const bff = createBffSession(config, key);
  const client = createPortcullisClient({
    baseUrl: config.apiUrl,
    dpop: key,
    // Called only once the page below exists: a 401's refresh, and a token past its time.
    refresh: () => page.refresh(),
    getAccessToken: () => page.refresh(),
  });
  const page = demo(bff, client);
  page.wire();
  await page.start(signInError).catch(page.handle);
}

main().catch((error: unknown) => {
  console.error(error);
  view.notice((error as Error).message ?? String(error), 'error');
});
