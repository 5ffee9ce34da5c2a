import { randomUUID } from 'node:crypto';
import type { Middleware, ParameterizedContext } from 'koa';
import { hasPermission, type Principal } from '@portcullis/claims';
import { uploadJson } from '../data/uploads-repo.js';
import { NotFoundError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors.js';
import { MULTIPART_OVERHEAD, receiveMultipart } from '../http/multipart.js';
import { principalOf, type ApiState } from '../middleware/authenticate.js';
import { defineRoute, type ApiRouter } from '../openapi/define-route.js';
import { defineRawRoute } from '../openapi/raw-route.js';
import { z } from '../openapi/zod.js';
import { UploadIdParams, UploadSchema } from '../schemas/uploads.js';
import { BlobTooLargeError } from '../storage/storage.js';
import type { ApiConfig } from '../config.js';
import type { RouteDeps } from './deps.js';
import { Perm } from '../permissions.js';

const tags = ['uploads'];
// Served as themselves; anything else (HTML, SVG, scripts…) is application/octet-stream.
const SAFE_TYPES = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'application/pdf',
  'text/plain',
  'text/csv',
  'application/json',
  'application/zip',
]);

/** C0/C1 controls and bidirectional overrides (which can disguise an extension). */
function isInvisible(code: number): boolean {
  return (
    code <= 0x1f ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x200e ||
    code === 0x200f ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

/** The client's file name as metadata only: last path segment, NFC, no controls or leading dots. */
export function sanitizeFilename(name: string): string {
  const base = name.normalize('NFC').split(/[/\\]/).pop() ?? '';
  const clean = [...base]
    .filter((ch) => !isInvisible(ch.codePointAt(0)!))
    .join('')
    .trim()
    .replace(/^\.+/, '');
  return [...clean].slice(0, 200).join('') || 'upload';
}

/** A syntactically valid, lower-cased media type, else application/octet-stream. */
export function normalizeContentType(type: string): string {
  const essence = type.split(';')[0]!.trim().toLowerCase();
  return /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/.test(essence)
    ? essence
    : 'application/octet-stream';
}

/** RFC 6266 + RFC 8187: an ASCII fallback and the exact UTF-8 name. */
function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

export function uploadVisibility(principal: Principal): { ownerId?: string } {
  return hasPermission(principal.permissions, Perm.UploadsAll)
    ? {}
    : { ownerId: principal.subject };
}

/** Upload bodies are streamed by their handlers: the JSON guard and parser must not touch them. */
export function skipJsonForUploads(requireJson: Middleware): Middleware {
  return async function exemptUploadBodies(ctx, next) {
    const streamed =
      (ctx.method === 'POST' && ctx.path === '/uploads') ||
      (ctx.method === 'PUT' && ctx.path.startsWith('/uploads/direct/'));
    if (!streamed) return requireJson(ctx, next);
    (ctx as { disableBodyParser?: boolean }).disableBodyParser = true;
    await next();
  };
}

/** A declared body over the cap is refused unread; the cap on decoded bytes is the store's. */
export function refuseDeclaredOversize(ctx: ParameterizedContext, maxBytes: number): void {
  const declared = ctx.request.length;
  const cap = ctx.get('Content-Encoding') ? maxBytes + Math.ceil(maxBytes / 1000) + 1024 : maxBytes;
  if (declared !== undefined && declared > cap) {
    ctx.set('Connection', 'close');
    throw new PayloadTooLargeError();
  }
}

export function uploadsRoutes(api: ApiRouter, deps: RouteDeps, config: ApiConfig): void {
  const { uploads } = deps.repos;
  const { storage } = deps;
  const maxBytes = config.uploads.maxBytes;

  defineRawRoute(
    api,
    {
      method: 'post',
      path: '/uploads',
      operationId: 'createUpload',
      summary: 'Upload a file (multipart/form-data: `file` and `caption`)',
      tags,
      permission: Perm.UploadsCreate,
      request: {
        body: {
          required: true,
          content: {
            'multipart/form-data': {
              schema: z.object({
                file: z.string().openapi({ format: 'binary' }),
                caption: z.string().max(4096).optional(),
              }),
            },
          },
        },
      },
      responses: {
        201: { description: 'Stored', content: { 'application/json': { schema: UploadSchema } } },
        413: { description: '`payload_too_large`: more than UPLOAD_MAX_BYTES (nothing is kept)' },
        415: { description: 'Not multipart/form-data' },
        422: { description: 'No `file` part, or a field too long' },
      },
    },
    async function createUpload(ctx: ParameterizedContext<ApiState>) {
      const principal = principalOf(ctx);
      if (!ctx.request.is('multipart/form-data')) {
        throw new UnsupportedMediaTypeError(
          'send multipart/form-data with the parts file and caption',
        );
      }
      refuseDeclaredOversize(ctx, maxBytes + MULTIPART_OVERHEAD);
      const id = randomUUID();
      let received;
      try {
        received = await receiveMultipart(ctx.req, {
          fileField: 'file',
          maxBytes,
          store: (file) => storage.put(id, file, { maxBytes }),
        });
      } catch (error) {
        // The rest of the body is not read: this connection cannot carry another request.
        ctx.set('Connection', 'close');
        // A refusal that came after the file was complete (too many parts) leaves nothing behind.
        await storage.delete(id);
        if (error instanceof BlobTooLargeError) throw new PayloadTooLargeError();
        throw error;
      }
      const now = deps.clock();
      const upload = await uploads
        .createStored(
          {
            id,
            ownerId: principal.subject,
            filename: sanitizeFilename(received.filename),
            contentType: normalizeContentType(received.mimeType),
            caption: received.fields['caption'] ?? null,
            storageKey: id,
            now,
          },
          received.blob,
        )
        .catch(async (error: unknown) => {
          await storage.delete(id);
          throw error;
        });
      ctx.status = 201;
      ctx.set('Location', `/uploads/${id}`);
      ctx.body = uploadJson(upload);
    },
  );

  defineRoute(
    api,
    {
      method: 'get',
      path: '/uploads/:id',
      operationId: 'getUpload',
      summary: 'Upload metadata (owners and admins)',
      tags,
      permission: Perm.UploadsRead,
      request: { params: UploadIdParams },
      responses: {
        200: {
          description: 'The upload',
          content: { 'application/json': { schema: UploadSchema } },
        },
      },
    },
    async function getUpload(ctx, { params }) {
      const principal = principalOf(ctx);
      const upload = await uploads.find(params.id, uploadVisibility(principal));
      if (!upload) throw new NotFoundError();
      ctx.body = uploadJson(upload);
    },
  );

  defineRawRoute(
    api,
    {
      method: 'get',
      path: '/uploads/:id/content',
      operationId: 'downloadUpload',
      summary: 'Download the bytes (always as an attachment)',
      tags,
      permission: Perm.UploadsRead,
      request: { params: UploadIdParams },
      responses: {
        200: {
          description: 'The file; `application/octet-stream` unless an allowlisted safe type',
          content: {
            'application/octet-stream': { schema: z.string().openapi({ format: 'binary' }) },
          },
        },
        404: { description: 'No such upload, not visible, or no content yet' },
      },
    },
    async function downloadUpload(ctx: ParameterizedContext<ApiState>) {
      const principal = principalOf(ctx);
      const parsed = UploadIdParams.safeParse(ctx.params);
      if (!parsed.success) throw new NotFoundError();
      const upload = await uploads.find(parsed.data.id, uploadVisibility(principal));
      if (!upload || upload.status !== 'stored') throw new NotFoundError();
      const body = await storage.get(upload.storageKey);
      ctx.status = 200;
      ctx.set(
        'Content-Type',
        SAFE_TYPES.has(upload.contentType) ? upload.contentType : 'application/octet-stream',
      );
      ctx.set('Content-Disposition', contentDisposition(upload.filename));
      ctx.set('X-Content-Type-Options', 'nosniff');
      if (upload.sha256) ctx.set('ETag', `"${upload.sha256}"`);
      if (upload.size !== null) ctx.length = upload.size;
      ctx.body = body;
    },
  );
}
