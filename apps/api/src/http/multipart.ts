import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import type { StoredBlob } from '../storage/storage.js';
import { decodedBody } from './body-parser.js';
import {
  AppError,
  MalformedMultipartError,
  TooManyPartsError,
  ValidationError,
} from '../errors.js';

export interface ReceivedFile {
  blob: StoredBlob;
  /** As the client sent them: sanitize before use. */
  filename: string;
  mimeType: string;
  fields: Record<string, string>;
}

/** What one upload may hold: the file, and a few small text fields beside it. */
const LIMITS = { files: 1, fields: 10, fieldSize: 4096, parts: 11 } as const;
/** Multipart framing on top of the file itself: boundaries, part headers, the fields. */
export const MULTIPART_OVERHEAD = 64 * 1024;

// Names and values become metadata in PostgreSQL, which refuses NUL in text.
// eslint-disable-next-line no-control-regex
const NUL = /\u0000/;

/** busboy's own wording is fine to show ("Malformed part header", "Unexpected end of form"). */
function malformed(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new MalformedMultipartError(`the multipart body cannot be read: ${reason}`);
}

/**
 * Reads a multipart/form-data request with busboy, streaming the one `fileField` part to
 * `store` as it arrives (never buffered whole); text fields are collected (small: 4 KiB
 * each, at most 10). Resolves after the whole body is read and the file stored.
 *
 * Every way a body can be wrong rejects, and only once: a framing error from busboy or
 * from any part's stream is a 400 `malformed_multipart` (an `error` event nobody listens
 * to would end the process), more files, fields or parts than {@link LIMITS} is a 413
 * `too_many_parts` (busboy would otherwise drop them silently), and `store`'s own error
 * (e.g. too large) passes through as it is. On any refusal the parser and every part
 * stream it handed out are destroyed, so the store removes what it wrote and no later part
 * of a body already received is stored (docs/robustness.md).
 */
export function receiveMultipart(
  req: IncomingMessage,
  options: { fileField: string; maxBytes: number; store: (file: Readable) => Promise<StoredBlob> },
): Promise<ReceivedFile> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let stored: Promise<StoredBlob> | undefined;
    let storing: Readable | undefined;
    let info = { filename: '', mimeType: 'application/octet-stream' };
    const fields: Record<string, string> = {};

    let parser: busboy.Busboy;
    let body: Readable;
    try {
      parser = busboy({
        headers: req.headers,
        // RFC 7578 §4.2 / HTML: file names are UTF-8, with `"` CR LF sent as %22 %0D %0A.
        defParamCharset: 'utf8',
        // One byte over the cap reaches the store, which refuses it (busboy would truncate).
        limits: { ...LIMITS, fileSize: options.maxBytes + 1 },
      });
    } catch (error) {
      // No boundary, or not multipart at all: busboy refuses the headers up front.
      reject(malformed(error));
      return;
    }
    try {
      body = decodedBody(req, options.maxBytes + MULTIPART_OVERHEAD);
    } catch (error) {
      // An unknown Content-Encoding: the 415 a JSON body gets.
      reject(error as Error);
      return;
    }

    /** `error` is the answer as it is: busboy's errors arrive here through {@link malformed}. */
    function fail(refusal: Error): void {
      if (settled) return;
      settled = true;
      body.unpipe(parser);
      if (body !== req) body.destroy();
      // The store sees its source fail and removes what it wrote.
      storing?.destroy(refusal);
      // busboy ends the part it is in; what it already holds of the body may still name a
      // part, which the `file` listener destroys (the parser's own `error` lands in `fail`).
      parser.destroy();
      // Answered once the store has let go of the file, so the caller can remove it for good.
      // Node discards the rest of the body once the response is sent.
      const done = () => reject(refusal);
      if (stored) stored.then(done, done);
      else done();
    }

    parser.on('file', (name, file, fileInfo) => {
      file.on('error', (error) => fail(malformed(error)));
      // A part after the refusal (busboy finishes the chunk it was parsing) is never stored.
      if (settled) return void file.destroy();
      const filename = (fileInfo.filename ?? '').replace(/%(22|0D|0A)/gi, (_, hex: string) =>
        String.fromCharCode(parseInt(hex, 16)),
      );
      if (name !== options.fileField) {
        fail(
          new ValidationError({
            [name]: [`unknown file part; send the file as ${options.fileField}`],
          }),
        );
        return;
      }
      if (NUL.test(filename) || NUL.test(fileInfo.mimeType)) {
        fail(new MalformedMultipartError('the file name or type contains a NUL character'));
        return;
      }
      info = { filename, mimeType: fileInfo.mimeType };
      storing = file;
      stored = options.store(file);
      stored.catch((error: Error) => fail(error));
    });
    parser.on('field', (name, value, fieldInfo) => {
      if (fieldInfo.valueTruncated) fail(new ValidationError({ [name]: ['at most 4096 bytes'] }));
      else if (NUL.test(name) || NUL.test(value))
        fail(
          new MalformedMultipartError(`the field ${JSON.stringify(name)} contains a NUL character`),
        );
      else fields[name] = value;
    });
    parser.on('filesLimit', () =>
      fail(new TooManyPartsError(`an upload holds at most ${LIMITS.files} file`)),
    );
    parser.on('fieldsLimit', () =>
      fail(new TooManyPartsError(`an upload holds at most ${LIMITS.fields} text fields`)),
    );
    parser.on('partsLimit', () =>
      fail(new TooManyPartsError(`an upload holds at most ${LIMITS.parts} parts`)),
    );
    parser.on('error', (error) => fail(malformed(error)));
    parser.on('close', () => {
      if (settled) return;
      if (!stored)
        return fail(new ValidationError({ [options.fileField]: ['a file part is required'] }));
      stored.then(
        (blob) => {
          if (settled) return;
          settled = true;
          resolve({ blob, ...info, fields });
        },
        (error: Error) => fail(error),
      );
    });
    req.on('aborted', () => fail(new MalformedMultipartError('the request was aborted')));
    // A decoded body fails with the 400 a JSON body gets when its bytes are not of its encoding.
    if (body !== req) body.on('error', (error) => fail(malformed(error)));
    body.pipe(parser);
  });
}
