/** RFC 8628 §3.4: the device authorization grant's `grant_type`. */
export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** RFC 8693 §2.1: token exchange's `grant_type` (oauth/token-exchange.ts). */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
