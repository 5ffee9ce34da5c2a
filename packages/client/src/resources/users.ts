import type { Http } from '../http.js';
import type { CallOptions, CursorPage, CursorParams, User } from '../types.js';

/** `/users`: cursor-paginated list, get, delete (needs `users:delete`). */
export interface UsersApi {
  list(params?: CursorParams, options?: CallOptions): Promise<CursorPage<User>>;
  get(id: string, options?: CallOptions): Promise<User>;
  delete(id: string, options?: CallOptions): Promise<void>;
}

export function createUsersApi(http: Http): UsersApi {
  const one = (id: string): string => `/users/${encodeURIComponent(id)}`;
  return {
    async list(params = {}, options) {
      const query = { after: params.after, limit: params.limit };
      return (
        await http.request<CursorPage<User>>({ method: 'GET', path: '/users', query, ...options })
      ).data;
    },
    async get(id, options) {
      return (await http.request<User>({ method: 'GET', path: one(id), ...options })).data;
    },
    async delete(id, options) {
      await http.request<void>({ method: 'DELETE', path: one(id), ...options });
    },
  };
}
