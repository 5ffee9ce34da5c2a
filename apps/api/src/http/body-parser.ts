import type { IncomingMessage } from 'node:http';
import { finished, Transform, type Readable } from 'node:stream';
import { bodyParser } from '@koa/bodyparser';
import inflate from 'inflation';
import type { Middleware } from 'koa';
import { bodyFailure, bodyFailureOf, type BodyFailure } from '@portcullis/observability';
import type { AppError } from '../errors.js';
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors.js';
import { JSON_TYPES } from '../middleware/require-json.js';

const JSON_LIMIT = '64kb';
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

/** A library error from reading a body as the API's error, or `undefined`. */
export function bodyReadError(error: unknown, contentEncoding?: string): AppError | undefined {
  const failure = bodyFailure(error, contentEncoding);
  return failure && toAppError(failure);
}

/** A streamed body decoded per Content-Encoding, failing as a JSON body would (413 past `maxBytes`). */
export function decodedBody(req: IncomingMessage, maxBytes: number): Readable {
  const encoding = req.headers['content-encoding'];
  let decoder: Readable;
  try {
    decoder = inflate(req);
  } catch (error) {
    throw bodyReadError(error, encoding) ?? error;
  }
  if (decoder === req) return req;
  let size = 0;
  const body = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      callback(size > maxBytes ? new PayloadTooLargeError() : null, chunk);
    },
  });
  decoder.on('error', (error) => body.destroy(bodyReadError(error, encoding) ?? error));
  decoder.pipe(body);
  // A reader that stops ends the decoding; a request cut short ends the body.
  body.on('close', () => decoder.destroy());
  finished(req, (error) => error && body.destroy(error));
  // A stream that already failed fails a pipeline; until read, the failure must not be uncaught.
  body.on('error', () => undefined);
  return body;
}

/** JSON bodies (url-encoded on the form paths), decompressed; an unreadable body is a 4xx here. */
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
