import type { Db, UploadRow } from '@portcullis/db';
import { recordEvent } from './events-repo.js';

export type UploadStatus = UploadRow['status'];

export interface Upload {
  id: string;
  ownerId: string;
  status: UploadStatus;
  /** The client's file name, sanitized; metadata only, never part of a path. */
  filename: string;
  contentType: string;
  caption: string | null;
  size: number | null;
  sha256: string | null;
  /** Pre-signed uploads: the most bytes the PUT may send. */
  maxSize: number | null;
  storageKey: string;
  createdAt: Date;
  storedAt: Date | null;
}

export interface NewUpload {
  id: string;
  ownerId: string;
  filename: string;
  contentType: string;
  caption: string | null;
  storageKey: string;
  now: Date;
}

export interface UploadsRepo {
  find(id: string, visibility: { ownerId?: string | undefined }): Promise<Upload | undefined>;
  /** A multipart upload whose bytes are already in storage: row and `upload.stored` together. */
  createStored(upload: NewUpload, blob: { size: number; sha256: string }): Promise<Upload>;
  createPending(upload: NewUpload, maxSize: number): Promise<Upload>;
  /** pending -> receiving in one statement: of two PUTs with one URL, one gets the row. */
  beginReceiving(id: string): Promise<Upload | undefined>;
  /** receiving -> pending (the PUT failed; the URL may be used again until it expires). */
  abortReceiving(id: string): Promise<void>;
  markStored(
    id: string,
    blob: { size: number; sha256: string },
    now: Date,
  ): Promise<Upload | undefined>;
}

function toUpload(row: UploadRow): Upload {
  return {
    id: row.id,
    ownerId: row.owner_id,
    status: row.status,
    filename: row.filename,
    contentType: row.content_type,
    caption: row.caption,
    size: row.size === null ? null : Number(row.size),
    sha256: row.sha256,
    maxSize: row.max_size === null ? null : Number(row.max_size),
    storageKey: row.storage_key,
    createdAt: row.created_at,
    storedAt: row.stored_at,
  };
}

export function uploadJson(upload: Upload) {
  return {
    id: upload.id,
    ownerId: upload.ownerId,
    status: upload.status,
    filename: upload.filename,
    contentType: upload.contentType,
    caption: upload.caption,
    size: upload.size,
    sha256: upload.sha256,
    createdAt: upload.createdAt.toISOString(),
    storedAt: upload.storedAt?.toISOString() ?? null,
  };
}

const columns = (u: NewUpload) => ({
  id: u.id,
  owner_id: u.ownerId,
  filename: u.filename,
  content_type: u.contentType,
  caption: u.caption,
  storage_key: u.storageKey,
  created_at: u.now,
});

const storedEvent = (upload: Upload) => ({
  type: 'upload.stored' as const,
  subjectType: 'upload' as const,
  subjectId: upload.id,
  ownerId: upload.ownerId,
  data: uploadJson(upload),
});

export function createUploadsRepo(db: Db): UploadsRepo {
  return {
    async find(id, visibility) {
      const query = db<UploadRow>('uploads').where('id', id);
      if (visibility.ownerId !== undefined) query.where('owner_id', visibility.ownerId);
      const row = await query.first();
      return row && toUpload(row);
    },

    createStored(upload, blob) {
      return db.transaction(async (trx) => {
        const [row] = await trx('uploads')
          .insert({
            ...columns(upload),
            status: 'stored',
            size: blob.size,
            sha256: blob.sha256,
            stored_at: upload.now,
          })
          .returning('*');
        const stored = toUpload(row as UploadRow);
        await recordEvent(trx, storedEvent(stored));
        return stored;
      });
    },

    async createPending(upload, maxSize) {
      const [row] = await db('uploads')
        .insert({ ...columns(upload), status: 'pending', max_size: maxSize })
        .returning('*');
      return toUpload(row as UploadRow);
    },

    async beginReceiving(id) {
      const [row] = await db('uploads')
        .where({ id, status: 'pending' })
        .update({ status: 'receiving' })
        .returning('*');
      return row && toUpload(row as UploadRow);
    },

    async abortReceiving(id) {
      await db('uploads').where({ id, status: 'receiving' }).update({ status: 'pending' });
    },

    markStored(id, blob, now) {
      return db.transaction(async (trx) => {
        const [row] = await trx('uploads')
          .where({ id, status: 'receiving' })
          .update({ status: 'stored', size: blob.size, sha256: blob.sha256, stored_at: now })
          .returning('*');
        if (!row) return undefined;
        const stored = toUpload(row as UploadRow);
        await recordEvent(trx, storedEvent(stored));
        return stored;
      });
    },
  };
}
