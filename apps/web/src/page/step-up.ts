/** Step-up (RFC 9470): the action waits in sessionStorage, retried once (apps/web/README.md#routes). */
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
