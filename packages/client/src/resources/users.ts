import type { Http } from '../http.js';
import type { CallOptions, CursorParams, OperationResponse, User, UserPage } from '../types.js';

/** `/users`: cursor-paginated list, get, delete (needs `users:delete`). */
export interface UsersApi {
  list(params?: CursorParams, options?: CallOptions): Promise<UserPage>;
  /** Conditional GET: a 304 is answered from the ETag cache. */
  get(id: string, options?: CallOptions): Promise<User>;
  delete(id: string, options?: CallOptions): Promise<void>;
}

export function createUsersApi(http: Http): UsersApi {
  const one = (id: string): string => `/users/${encodeURIComponent(id)}`;
  return {
    async list(params = {}, options) {
      const query = { after: params.after, limit: params.limit };
      return (
        await http.request<OperationResponse<'listUsers'>>({
          method: 'GET',
          path: '/users',
          query,
          ...options,
        })
      ).data;
    },
    async get(id, options) {
      return (
        await http.request<OperationResponse<'getUser'>>({
          method: 'GET',
          path: one(id),
          ...options,
        })
      ).data;
    },
    async delete(id, options) {
      await http.request<void>({ method: 'DELETE', path: one(id), ...options });
    },
  };
}
