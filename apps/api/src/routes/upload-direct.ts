import { randomUUID } from 'node:crypto';
import type { ParameterizedContext } from 'koa';
import type { ApiConfig } from '../config.js';
import { uploadJson } from '../data/uploads-repo.js';
import {
  AppError,
  BadRequestError,
  ConflictError,
  ForbiddenError,
  PayloadTooLargeError,
  ValidationError,
} from '../errors.js';
import { decodedBody } from '../http/body-parser.js';
import { principalOf, type ApiState } from '../middleware/authenticate.js';
import { defineRoute, type ApiRouter } from '../openapi/define-route.js';
import { defineRawRoute } from '../openapi/raw-route.js';
import { z } from '../openapi/zod.js';
import {
  DirectUploadQuery,
  PresignBody,
  PresignedUploadSchema,
  UploadIdParams,
  UploadSchema,
} from '../schemas/uploads.js';
import { BlobTooLargeError } from '../storage/storage.js';
import type { RouteDeps } from './deps.js';
import { normalizeContentType, refuseDeclaredOversize, sanitizeFilename } from './uploads.js';
import { Perm } from '../permissions.js';

/** Direct uploads (docs/api-contracts.md#uploads): a signed URL, accepted once, 403 if expired. */
export function uploadDirectRoutes(api: ApiRouter, deps: RouteDeps, config: ApiConfig): void {
  const { uploads } = deps.repos;
  const { storage } = deps;

  defineRoute(
    api,
    {
      method: 'post',
      path: '/uploads/presign',
      operationId: 'presignUpload',
      summary: 'Get a pre-signed URL for one direct PUT of a large file',
      tags: ['uploads'],
      permission: Perm.UploadsCreate,
      request: { body: PresignBody },
      responses: {
        201: {
          description: 'The URL and its expiry',
          content: { 'application/json': { schema: PresignedUploadSchema } },
        },
      },
    },
    async function presignUpload(ctx, { body }) {
      const principal = principalOf(ctx);
      if (body.size > config.uploads.maxBytes) {
        throw new ValidationError({ size: [`at most ${config.uploads.maxBytes} bytes`] });
      }
      const id = randomUUID();
      await uploads.createPending(
        {
          id,
          ownerId: principal.subject,
          filename: sanitizeFilename(body.filename),
          contentType: normalizeContentType(body.contentType),
          caption: null,
          storageKey: id,
          now: deps.clock(),
        },
        body.size,
      );
      const signed = await storage.presignPut({
        key: id,
        ttlSec: config.uploads.presignTtlSec,
        maxBytes: body.size,
      });
      ctx.status = 201;
      ctx.set('Location', `/uploads/${id}`);
      ctx.body = {
        uploadId: id,
        url: signed.url,
        method: signed.method,
        expiresAt: signed.expiresAt.toISOString(),
      };
    },
  );

  defineRawRoute(
    api,
    {
      method: 'put',
      path: '/uploads/direct/:id',
      operationId: 'putDirectUpload',
      summary: 'The pre-signed PUT (no other credential; once; before it expires)',
      tags: ['uploads'],
      request: {
        params: UploadIdParams,
        query: DirectUploadQuery,
        body: {
          required: true,
          content: {
            'application/octet-stream': { schema: z.string().openapi({ format: 'binary' }) },
          },
        },
      },
      responses: {
        200: { description: 'Stored', content: { 'application/json': { schema: UploadSchema } } },
        403: { description: 'Expired, altered or unknown URL' },
        409: { description: 'This URL was already used' },
        413: { description: 'More bytes than the pre-signed size' },
      },
    },
    async function putDirectUpload(ctx: ParameterizedContext<ApiState>) {
      const params = UploadIdParams.safeParse(ctx.params);
      const query = DirectUploadQuery.safeParse(ctx.query);
      if (!params.success || !query.success) throw new ForbiddenError('malformed pre-signed URL');
      const upload = await uploads.find(params.data.id, {});
      const maxBytes = upload ? Number(upload.maxSize ?? 0) : 0;
      const valid =
        upload !== undefined &&
        (await storage.verifyPresigned({
          key: upload.storageKey,
          maxBytes,
          expires: query.data.expires,
          sig: query.data.sig,
        }));
      if (!valid || !upload) throw new ForbiddenError('invalid or expired pre-signed URL');
      refuseDeclaredOversize(ctx, maxBytes);
      if (!(await uploads.beginReceiving(upload.id))) {
        throw new ConflictError('conflict', 'this upload URL was already used');
      }
      let blob;
      try {
        blob = await storage.put(upload.storageKey, decodedBody(ctx.req, maxBytes), { maxBytes });
      } catch (error) {
        await uploads.abortReceiving(upload.id);
        if (error instanceof BlobTooLargeError) {
          ctx.set('Connection', 'close');
          throw new PayloadTooLargeError();
        }
        // An unknown Content-Encoding, or bytes not of it: answered as for a JSON body.
        if (error instanceof AppError) {
          ctx.set('Connection', 'close');
          throw error;
        }
        // The client went away mid-body: its failure, not ours (nobody reads this answer).
        if (!ctx.req.complete) throw new BadRequestError('invalid_request', 'the body ended early');
        throw error;
      }
      const stored = await uploads.markStored(upload.id, blob, deps.clock());
      if (!stored) throw new ConflictError('conflict', 'this upload URL was already used');
      ctx.set('ETag', `"${blob.sha256}"`);
      ctx.body = uploadJson(stored);
    },
  );
}
