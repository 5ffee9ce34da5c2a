import type { Http } from '../http.js';
import type {
  ApiKey,
  ApiKeyCreate,
  ApiKeyCreated,
  ApiKeyPage,
  CallOptions,
  CursorParams,
  OperationResponse,
} from '../types.js';

/** `/api-keys`: list, get, create (the key is returned once), revoke. */
export interface ApiKeysApi {
  list(params?: CursorParams, options?: CallOptions): Promise<ApiKeyPage>;
  get(id: string, options?: CallOptions): Promise<ApiKey>;
  create(body: ApiKeyCreate, options?: CallOptions): Promise<ApiKeyCreated>;
  revoke(id: string, options?: CallOptions): Promise<void>;
}

export function createApiKeysApi(http: Http): ApiKeysApi {
  const one = (id: string): string => `/api-keys/${encodeURIComponent(id)}`;
  return {
    async list(params = {}, options) {
      const query = { after: params.after, limit: params.limit };
      return (
        await http.request<OperationResponse<'listApiKeys'>>({
          method: 'GET',
          path: '/api-keys',
          query,
          ...options,
        })
      ).data;
    },
    async get(id, options) {
      return (
        await http.request<OperationResponse<'getApiKey'>>({
          method: 'GET',
          path: one(id),
          ...options,
        })
      ).data;
    },
    async create(body, options) {
      return (
        await http.request<OperationResponse<'createApiKey'>>({
          method: 'POST',
          path: '/api-keys',
          json: body,
          ...options,
        })
      ).data;
    },
    async revoke(id, options) {
      await http.request<void>({ method: 'DELETE', path: one(id), ...options });
    },
  };
}
