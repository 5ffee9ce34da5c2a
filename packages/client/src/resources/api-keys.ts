import type { Http } from '../http.js';
import type {
  ApiKey,
  ApiKeyCreate,
  ApiKeyCreated,
  CallOptions,
  CursorPage,
  CursorParams,
} from '../types.js';

/** `/api-keys`: list, create (the key is returned once), revoke. */
export interface ApiKeysApi {
  list(params?: CursorParams, options?: CallOptions): Promise<CursorPage<ApiKey>>;
  create(body?: ApiKeyCreate, options?: CallOptions): Promise<ApiKeyCreated>;
  revoke(id: string, options?: CallOptions): Promise<void>;
}

export function createApiKeysApi(http: Http): ApiKeysApi {
  return {
    async list(params = {}, options) {
      const query = { after: params.after, limit: params.limit };
      return (
        await http.request<CursorPage<ApiKey>>({
          method: 'GET',
          path: '/api-keys',
          query,
          ...options,
        })
      ).data;
    },
    async create(body = {}, options) {
      return (
        await http.request<ApiKeyCreated>({
          method: 'POST',
          path: '/api-keys',
          json: body,
          ...options,
        })
      ).data;
    },
    async revoke(id, options) {
      await http.request<void>({
        method: 'DELETE',
        path: `/api-keys/${encodeURIComponent(id)}`,
        ...options,
      });
    },
  };
}
