import type { PasskeysRepo } from '../../data/passkeys-repo.js';
import { markup, translated } from '../ui/html.js';
import type { FactorKind } from './factors.js';
import {
  passkeyScriptTag,
  passkeySetupForm,
  passkeySignInForm,
  passkeysSection,
} from './passkeys-views.js';

/** Passkeys as a second-factor kind (mfa/factors.ts); their pages load our one script. */
export function createPasskeyFactor(repo: PasskeysRepo): FactorKind {
  return {
    kind: 'passkey',
    async list(userId) {
      return (await repo.listByUser(userId)).map((p) => ({
        kind: 'passkey',
        id: p.id,
        name: p.name,
        createdAt: p.createdAt,
        lastUsedAt: p.lastUsedAt,
      }));
    },
    removeAll: (userId) => repo.removeAll(userId),
    async signInForm(input) {
      if ((await repo.listByUser(input.userId)).length === 0) return undefined;
      const label = translated(input.ui.t)('mfa:usePasskey');
      return markup`${passkeySignInForm(input.ui, input.uid, input.csrf, label)}\n${passkeyScriptTag}`;
    },
    async setupForm(input) {
      return markup`${passkeySetupForm(input.ui, input.uid, input.csrf)}\n${passkeyScriptTag}`;
    },
    async accountSection(ui, userId, csrf) {
      return passkeysSection(ui, await repo.listByUser(userId), csrf);
    },
  };
}
