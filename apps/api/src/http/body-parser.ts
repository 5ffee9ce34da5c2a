import { bodyParser } from '@koa/bodyparser';
import type { Context, Middleware } from 'koa';
import { bodyFailure, bodyFailureOf, type BodyFailure } from '@portcullis/observability';
import type { AppError } from '../errors.js';
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors.js';
import { JSON_TYPES } from '../middleware/require-json.js';

const JSON_LIMIT = '64kb';
/** The login form carries an email and a password. */
const FORM_LIMIT = '8kb';

function toAppError(failure: BodyFailure): AppError {
  switch (failure.kind) {
    case 'malformed_json':
      return new BadRequestError('malformed_json', failure.message);
    case 'too_large':
      return new PayloadTooLargeError();
    case 'unsupported':
      return new UnsupportedMediaTypeError(failure.message);
    default:
      return new BadRequestError('invalid_request', failure.message);
  }
}

/**
 * A library error from reading a request body as the API's error, or `undefined`. Without
 * `ctx`, decompression errors are not recognised (zlib can fail elsewhere too).
 */
export function bodyReadError(error: unknown, ctx?: Context): AppError | undefined {
  const failure = bodyFailure(error, ctx?.get('Content-Encoding'));
  return failure && toAppError(failure);
}

/**
 * JSON bodies, and url-encoded ones on the form paths (requireJsonBody refuses them
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
      throw toAppError(bodyFailureOf(error, ctx.get('Content-Encoding')));
    },
  });
}
