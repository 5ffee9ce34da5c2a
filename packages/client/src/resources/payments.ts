import type { Http } from '../http.js';
import type {
  CallOptions,
  CursorParams,
  OperationResponse,
  Payment,
  PaymentCreate,
  PaymentPage,
} from '../types.js';

export interface CreatePaymentOptions extends CallOptions {
  /** Generated when absent and reused on retries; pass a failed call's to retry without charging twice. */
  idempotencyKey?: string;
}

/** `/payments`: idempotent create, cursor list, get. */
export interface PaymentsApi {
  create(body: PaymentCreate, options?: CreatePaymentOptions): Promise<Payment>;
  list(params?: CursorParams, options?: CallOptions): Promise<PaymentPage>;
  get(id: string, options?: CallOptions): Promise<Payment>;
}

export function createPaymentsApi(http: Http): PaymentsApi {
  return {
    async create(body, options = {}) {
      const { idempotencyKey = crypto.randomUUID(), ...rest } = options;
      return (
        await http.request<OperationResponse<'createPayment'>>({
          method: 'POST',
          path: '/payments',
          json: body,
          idempotencyKey,
          ...rest,
        })
      ).data;
    },
    async list(params = {}, options) {
      const query = { after: params.after, limit: params.limit };
      return (
        await http.request<OperationResponse<'listPayments'>>({
          method: 'GET',
          path: '/payments',
          query,
          ...options,
        })
      ).data;
    },
    async get(id, options) {
      return (
        await http.request<OperationResponse<'getPayment'>>({
          method: 'GET',
          path: `/payments/${encodeURIComponent(id)}`,
          ...options,
        })
      ).data;
    },
  };
}
