// @portcullis/shop: the demo shop's vocabulary shared by the auth server and the API.
export {
  PAYMENT_DETAIL_TYPE,
  paymentDetailOf,
  type PaymentAuthorizationDetail,
} from './payment-detail.js';
