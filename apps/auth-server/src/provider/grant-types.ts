/** RFC 8628 §3.4: the device authorization grant's `grant_type`. */
export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
