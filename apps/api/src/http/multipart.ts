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
  filename: string;
  mimeType: string;
  fields: Record<string, string>;
}

const LIMITS = { files: 1, fields: 10, fieldSize: 4096, parts: 11 } as const;
export const MULTIPART_OVERHEAD = 64 * 1024;

// Names and values become metadata in PostgreSQL, which refuses NUL in text.
// eslint-disable-next-line no-control-regex
const NUL = /\u0000/;

function malformed(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new MalformedMultipartError(`the multipart body cannot be read: ${reason}`);
}

/** Streams `fileField` to `store`; a refusal leaves nothing behind (docs/robustness.md#bad-input). */
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
      reject(malformed(error));
      return;
    }
    try {
      body = decodedBody(req, options.maxBytes + MULTIPART_OVERHEAD);
    } catch (error) {
      reject(error as Error);
      return;
    }

    function fail(refusal: Error): void {
      if (settled) return;
      settled = true;
      body.unpipe(parser);
      if (body !== req) body.destroy();
      // The store sees its source fail and removes what it wrote.
      storing?.destroy(refusal);
      // What busboy already holds may still name a part, which the `file` listener destroys.
      parser.destroy();
      // Answered once the store has let go of the file; Node discards the rest of the body.
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
    if (body !== req) body.on('error', (error) => fail(malformed(error)));
    body.pipe(parser);
  });
}
