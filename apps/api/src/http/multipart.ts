import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import type { StoredBlob } from '../storage/storage.js';
import { ValidationError } from '../errors.js';

export interface ReceivedFile {
  blob: StoredBlob;
  /** As the client sent them: sanitize before use. */
  filename: string;
  mimeType: string;
  fields: Record<string, string>;
}

/**
 * Reads a multipart/form-data request with busboy, streaming the one `fileField` part to
 * `store` as it arrives (never buffered whole); other files are discarded, text fields
 * collected (small: 4 KiB each, at most 10). Resolves after the whole body is read and
 * the file stored; rejects with `store`'s error (e.g. too large) as soon as it happens.
 */
export function receiveMultipart(
  req: IncomingMessage,
  options: { fileField: string; maxBytes: number; store: (file: Readable) => Promise<StoredBlob> },
): Promise<ReceivedFile> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let stored: Promise<StoredBlob> | undefined;
    let info = { filename: '', mimeType: 'application/octet-stream' };
    const fields: Record<string, string> = {};
    const parser = busboy({
      headers: req.headers,
      // RFC 7578 §4.2 / HTML: file names are UTF-8, with `"` CR LF sent as %22 %0D %0A.
      defParamCharset: 'utf8',
      // One byte over the cap reaches the store, which refuses it (busboy would truncate silently).
      limits: { files: 1, fileSize: options.maxBytes + 1, fields: 10, fieldSize: 4096, parts: 20 },
    });

    function fail(error: unknown): void {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      // Node discards the rest of the body once the response is sent.
      reject(error);
    }

    parser.on('file', (name, file, fileInfo) => {
      if (name !== options.fileField || stored) {
        file.resume();
        return;
      }
      const filename = (fileInfo.filename ?? '').replace(/%(22|0D|0A)/gi, (_, hex: string) =>
        String.fromCharCode(parseInt(hex, 16)),
      );
      info = { filename, mimeType: fileInfo.mimeType };
      stored = options.store(file);
      stored.catch(fail);
    });
    parser.on('field', (name, value, fieldInfo) => {
      if (fieldInfo.valueTruncated) fail(new ValidationError({ [name]: ['at most 4096 bytes'] }));
      else fields[name] = value;
    });
    parser.on('error', fail);
    parser.on('close', () => {
      if (!stored)
        return fail(new ValidationError({ [options.fileField]: ['a file part is required'] }));
      stored.then((blob) => {
        if (settled) return;
        settled = true;
        resolve({ blob, ...info, fields });
      }, fail);
    });
    req.on('aborted', () => fail(new Error('request aborted')));
    req.pipe(parser);
  });
}
