import type { SafeHtml } from '../ui/html.js';
import type { Ui } from '../ui/index.js';
/** The second-factor kinds (app, passkeys); recovery codes stand in for one and are not a kind. */
export interface FactorSummary {
  kind: string;
  /** Unique within its kind (for one passkey among several). */
  id: string;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

export interface FactorKind {
  kind: string;
  /** The user's usable factors of this kind (enrolments in progress left out). */
  list(userId: string): Promise<FactorSummary[]>;
  /** Removes every factor of this kind the user has; returns how many. */
  removeAll(userId: string): Promise<number>;
  /** Markup offering this kind on the factor page when the user has one; undefined: none. */
  signInForm?(input: {
    uid: string;
    csrf: string;
    userId: string;
    ui: Ui;
  }): Promise<SafeHtml | undefined>;
  /** Markup setting this kind up on the factor page, for a user with no factor yet. */
  setupForm?(input: { uid: string; csrf: string; userId: string; ui: Ui }): Promise<SafeHtml>;
  /** Markup of this kind's section of the account page (forms carry `csrf`). */
  accountSection?(ui: Ui, userId: string, csrf: string): Promise<SafeHtml>;
}

export interface FactorRegistry {
  register(kind: FactorKind): void;
  readonly kinds: readonly FactorKind[];
  /** Every usable second factor of the user, of every kind. */
  factorsOf(userId: string): Promise<FactorSummary[]>;
  hasSecondFactor(userId: string): Promise<boolean>;
  /** Removes every factor of every kind; returns the count per kind. */
  removeAll(userId: string): Promise<Record<string, number>>;
}

export function createFactorRegistry(): FactorRegistry {
  const kinds: FactorKind[] = [];
  const factorsOf = async (userId: string) =>
    (await Promise.all(kinds.map((k) => k.list(userId)))).flat();
  return {
    register(kind) {
      if (kinds.some((k) => k.kind === kind.kind)) throw new Error(`factor ${kind.kind} twice`);
      kinds.push(kind);
    },
    kinds,
    factorsOf,
    async hasSecondFactor(userId) {
      return (await factorsOf(userId)).length > 0;
    },
    async removeAll(userId) {
      const counts = await Promise.all(kinds.map((k) => k.removeAll(userId)));
      return Object.fromEntries(kinds.map((k, i) => [k.kind, counts[i]!]));
    },
  };
}
