import type { Http } from '../http.js';
import type { CallOptions, OperationResponse, Upload, UploadInput } from '../types.js';

/** `/uploads`: multipart upload and metadata lookup. */
export interface UploadsApi {
  /** POST multipart/form-data with parts `file` and `caption`; fetch writes the boundary. */
  upload(input: UploadInput, options?: CallOptions): Promise<Upload>;
  get(id: string, options?: CallOptions): Promise<Upload>;
}

export function createUploadsApi(http: Http): UploadsApi {
  return {
    async upload(input, options) {
      const form = new FormData();
      const name = input.filename ?? (input.file instanceof File ? input.file.name : 'upload');
      form.append('file', input.file, name);
      if (input.caption !== undefined) form.append('caption', input.caption);
      return (
        await http.request<OperationResponse<'createUpload'>>({
          method: 'POST',
          path: '/uploads',
          body: form,
          ...options,
        })
      ).data;
    },
    async get(id, options) {
      return (
        await http.request<OperationResponse<'getUpload'>>({
          method: 'GET',
          path: `/uploads/${encodeURIComponent(id)}`,
          ...options,
        })
      ).data;
    },
  };
}
