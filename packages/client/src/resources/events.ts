import type { Http } from '../http.js';
import type { CallOptions, EventListParams, EventPage, OperationResponse } from '../types.js';

/** `/events`: chronological feed read backwards with `before`. */
export interface EventsApi {
  list(params?: EventListParams, options?: CallOptions): Promise<EventPage>;
}

export function createEventsApi(http: Http): EventsApi {
  return {
    async list(params = {}, options) {
      const query = { before: params.before, limit: params.limit };
      return (
        await http.request<OperationResponse<'listEvents'>>({
          method: 'GET',
          path: '/events',
          query,
          ...options,
        })
      ).data;
    },
  };
}
