import type { Http } from '../http.js';
import type { CallOptions, EventItem, EventListParams, TimePage } from '../types.js';

/** `/events`: chronological feed read backwards with `before`. */
export interface EventsApi {
  list(params?: EventListParams, options?: CallOptions): Promise<TimePage<EventItem>>;
}

export function createEventsApi(http: Http): EventsApi {
  return {
    async list(params = {}, options) {
      const query = { before: params.before, limit: params.limit };
      return (
        await http.request<TimePage<EventItem>>({
          method: 'GET',
          path: '/events',
          query,
          ...options,
        })
      ).data;
    },
  };
}
