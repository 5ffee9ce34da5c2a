import { z } from '../openapi/zod.js';

export const UploadSchema = z
  .object({
    id: z.uuid(),
    ownerId: z.string(),
    status: z
      .enum(['pending', 'receiving', 'stored'])
      .openapi({ description: 'pending until a pre-signed PUT arrives' }),
    filename: z
      .string()
      .openapi({ description: 'The client’s file name, sanitized (metadata only)' }),
    contentType: z.string(),
    caption: z.string().nullable(),
    size: z.number().int().nullable(),
    sha256: z.string().nullable().openapi({ description: 'Hex SHA-256 of the stored bytes' }),
    createdAt: z.iso.datetime(),
    storedAt: z.iso.datetime().nullable(),
  })
  .openapi('Upload');

export const PresignBody = z
  .strictObject({
    filename: z.string().min(1).max(1024),
    size: z.number().int().min(1).openapi({ description: 'Bytes the PUT will send at most' }),
    contentType: z.string().min(3).max(255),
  })
  .openapi('PresignUpload');

export const PresignedUploadSchema = z
  .object({
    uploadId: z.uuid(),
    url: z
      .string()
      .openapi({ description: 'Relative to the API: PUT the bytes here once, before expiresAt' }),
    method: z.literal('PUT'),
    expiresAt: z.iso.datetime(),
  })
  .openapi('PresignedUpload');

export const UploadIdParams = z.object({ id: z.uuid() });

export const DirectUploadQuery = z.object({
  expires: z.string().openapi({ param: { description: 'Unix seconds, as signed' } }),
  sig: z.string().openapi({ param: { description: 'HMAC-SHA256 signature, base64url' } }),
});
