/** Why a request body could not be read or parsed: always the client's bytes (README "Bad input"). */
export interface BodyFailure {
  status: 400 | 413 | 415;
  /** The error code both services answer it with (error-codes.ts). */
  code: 'malformed_json' | 'invalid_request' | 'payload_too_large' | 'unsupported_media_type';
  kind: 'malformed_json' | 'prototype_key' | 'too_large' | 'unsupported' | 'unreadable';
  message: string;
}

type LibraryError = { type?: unknown; status?: unknown; errno?: unknown; code?: unknown };

/** zlib and brotli failures carry a numeric errno and a code (Z_DATA_ERROR, ERR__ERROR_...). */
const isDecompressionError = (error: LibraryError) =>
  typeof error.errno === 'number' && typeof error.code === 'string';

/** `contentEncoding` names what a zlib error is about; without it such errors are not recognised. */
export function bodyFailure(error: unknown, contentEncoding?: string): BodyFailure | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as LibraryError;
  if (error instanceof SyntaxError && e.status === 400) {
    // co-body's JSON parser (bourne) refuses prototype poisoning rather than dropping the key.
    return /forbidden prototype property/.test(error.message)
      ? {
          status: 400,
          code: 'invalid_request',
          kind: 'prototype_key',
          message: 'a "__proto__" key is not allowed',
        }
      : {
          status: 400,
          code: 'malformed_json',
          kind: 'malformed_json',
          message: 'the body is not valid JSON',
        };
  }
  switch (e.type) {
    case 'entity.parse.failed':
      return {
        status: 400,
        code: 'malformed_json',
        kind: 'malformed_json',
        message: 'the body is not valid JSON',
      };
    case 'entity.too.large':
      return {
        status: 413,
        code: 'payload_too_large',
        kind: 'too_large',
        message: 'the body is too large',
      };
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return {
        status: 415,
        code: 'unsupported_media_type',
        kind: 'unsupported',
        message: 'request bodies must be UTF-8',
      };
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return {
        status: 400,
        code: 'invalid_request',
        kind: 'unreadable',
        message: 'the body could not be read',
      };
  }
  // inflation's "Unsupported Content-Encoding" (the only 415 it raises).
  if (e.status === 415) {
    return {
      status: 415,
      code: 'unsupported_media_type',
      kind: 'unsupported',
      message: 'Content-Encoding must be gzip, deflate, br or identity',
    };
  }
  if (contentEncoding && isDecompressionError(e)) {
    const encoding = contentEncoding.trim().toLowerCase();
    return {
      status: 400,
      code: 'invalid_request',
      kind: 'unreadable',
      message: `the body is not valid ${encoding} content`,
    };
  }
  return undefined;
}

/** For a body parser's onError: whatever failed while reading the body is the client's. */
export function bodyFailureOf(error: unknown, contentEncoding: string): BodyFailure {
  return (
    bodyFailure(error, contentEncoding) ?? {
      status: 400,
      code: 'invalid_request',
      kind: 'unreadable',
      message: 'the body could not be read',
    }
  );
}
