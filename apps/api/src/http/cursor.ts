import { createHmac } from 'node:crypto';
import { constantTimeEqual } from '@portcullis/observability';
import { BadRequestError } from '../errors.js';

/**
 * Opaque cursors: base64url(JSON) + "." + HMAC-SHA256 tag. Clients cannot forge a
 * position (e.g. to probe ids) and a tampered cursor is a 400, not a silent restart.
 */
export interface CursorCodec {
  encode(position: { id: string }): Promise<string>;
  decode(cursor: string): Promise<{ id: string }>;
}

export function createCursorCodec(key: () => Promise<Buffer>, purpose: string): CursorCodec {
  const tag = async (payload: string) =>
    createHmac('sha256', await key())
      .update(`${purpose}\n${payload}`)
      .digest()
      .subarray(0, 16);

  const invalid = () =>
    new BadRequestError('invalid_cursor', 'the cursor is invalid or was tampered with');

  return {
    async encode(position) {
      const payload = Buffer.from(JSON.stringify({ id: position.id })).toString('base64url');
      return `${payload}.${(await tag(payload)).toString('base64url')}`;
    },
    async decode(cursor) {
      const [payload, signature, extra] = cursor.split('.');
      if (!payload || !signature || extra !== undefined) throw invalid();
      // Compared as text: base64url decoding ignores trailing bits, so a changed last
      // character could decode to the same bytes.
      const expected = (await tag(payload)).toString('base64url');
      if (!constantTimeEqual(expected, signature)) throw invalid();
      let parsed: unknown;
      try {
        parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        throw invalid();
      }
      const id = (parsed as { id?: unknown } | null)?.id;
      if (typeof id !== 'string' || id.length === 0) throw invalid();
      return { id };
    },
  };
}
