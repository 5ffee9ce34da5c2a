/**
 * Step-up (RFC 9470; README "Step-up"): when the API wants a stronger or more recent
 * sign-in for an action (a payment above STEP_UP_PAYMENT_AMOUNT), the page keeps the
 * action, sends the user through a sign-in that asks for it (`acr_values`, `max_age`,
 * passed on by the BFF's /auth/login) and retries the action once after the return. The
 * action waits in sessionStorage (this tab only; no token in it) for ten minutes at most,
 * and is taken out before it is retried: a sign-in that still falls short is reported,
 * never looped.
 */
import { stepUpParams, type StepUpChallenge } from '@portcullis/client';

/** A payment the API refused for want of a step-up, retried with its Idempotency-Key. */
export interface PendingPayment {
  kind: 'payment';
  orderId: string;
  amount: number;
  currency: string;
  idempotencyKey: string;
}

export type PendingAction = PendingPayment;

const STORAGE_KEY = 'portcullis-demo:step-up';
const LIFETIME_MS = 10 * 60_000;

/** Keeps `action` and leaves for the step-up sign-in. */
export function stepUp(action: PendingAction, challenge: StepUpChallenge): void {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ action, at: Date.now() }));
  location.assign(`/auth/login?${new URLSearchParams(stepUpParams(challenge))}`);
}

/** The action waiting for this tab's step-up sign-in, if any; it is forgotten here. */
export function takePendingAction(): PendingAction | undefined {
  const stored = sessionStorage.getItem(STORAGE_KEY);
  sessionStorage.removeItem(STORAGE_KEY);
  if (stored === null) return undefined;
  try {
    const { action, at } = JSON.parse(stored) as { action?: Partial<PendingPayment>; at?: number };
    if (typeof at !== 'number' || Date.now() - at > LIFETIME_MS) return undefined;
    if (
      action?.kind === 'payment' &&
      typeof action.orderId === 'string' &&
      typeof action.amount === 'number' &&
      typeof action.currency === 'string' &&
      typeof action.idempotencyKey === 'string'
    ) {
      return action as PendingPayment;
    }
  } catch {
    // Not ours, or from another version of the page: nothing to resume.
  }
  return undefined;
}
