export const DAY = 24 * 60 * 60;

/** How long the provider's artifacts live, in seconds (a grant as long as its refresh token). */
export const REFRESH_TOKEN_TTL = 30 * DAY;
export const ID_TOKEN_TTL = 60 * 60;
export const PAR_REQUEST_URI_TTL = 60;
