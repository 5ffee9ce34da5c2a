import { bodyParser } from '@koa/bodyparser';
import type { Context, Middleware } from 'koa';
import {
  AppError,
  BadRequestError,
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
} from '../errors.js';
import { JSON_TYPES } from '../middleware/require-json.js';

const JSON_LIMIT = '64kb';
/** The login form carries an email and a password. */
const FORM_LIMIT = '8kb';

/** raw-body errors carry a `type`; co-body's JSON failures are SyntaxErrors with status 400. */
function knownBodyError(error: { type?: unknown; status?: unknown }): AppError | undefined {
  // co-body's JSON parser (bourne) refuses prototype poisoning rather than dropping the key.
  if (error instanceof SyntaxError && /forbidden prototype property/.test(error.message)) {
    return new BadRequestError('invalid_request', 'a "__proto__" key is not allowed');
  }
  if (error instanceof SyntaxError && error.status === 400) {
    return new BadRequestError('malformed_json', 'the body is not valid JSON');
  }
  switch (error.type) {
    case 'entity.parse.failed':
      return new BadRequestError('malformed_json', 'the body is not valid JSON');
    case 'entity.too.large':
      return new PayloadTooLargeError();
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new UnsupportedMediaTypeError('request bodies must be UTF-8 JSON');
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return new BadRequestError('invalid_request', 'the body could not be read');
    default:
      return undefined;
  }
}

/** zlib and brotli failures carry a numeric errno and a code (Z_DATA_ERROR, ERR__ERROR_...). */
const isDecompressionError = (error: { errno?: unknown; code?: unknown }) =>
  typeof error.errno === 'number' && typeof error.code === 'string';

/**
 * What went wrong while reading, decompressing or parsing a request body, as the client's
 * error: every such failure is about the bytes it sent. `undefined` for anything else.
 */
export function bodyReadError(error: unknown, ctx?: Context): AppError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as { type?: unknown; status?: unknown; errno?: unknown; code?: unknown };
  const known = knownBodyError(e);
  if (known) return known;
  // inflation's "Unsupported Content-Encoding" (the only 415 it raises).
  if (e.status === 415) {
    return new UnsupportedMediaTypeError('Content-Encoding must be gzip, deflate, br or identity');
  }
  if (ctx && isDecompressionError(e)) {
    const encoding = ctx.get('Content-Encoding').trim().toLowerCase();
    return new BadRequestError('invalid_request', `the body is not valid ${encoding} content`);
  }
  return undefined;
}

/**
 * JSON bodies, and url-encoded ones on `formPaths` (requireJsonBody refuses them
 * elsewhere), decompressed as Content-Encoding says. A body that cannot be read, decoded
 * or parsed is a 4xx here, where the failure is known to be about the body.
 */
export function parseBodies(): Middleware {
  return bodyParser({
    enableTypes: ['json', 'form'],
    // Merged index-wise into the defaults: listing application/json first keeps it.
    extendTypes: { json: JSON_TYPES },
    jsonLimit: JSON_LIMIT,
    formLimit: FORM_LIMIT,
    encoding: 'utf-8',
    onError(error, ctx) {
      throw (
        bodyReadError(error, ctx as unknown as Context) ??
        new BadRequestError('invalid_request', 'the body could not be read')
      );
    },
  });
}
