/** The `aud` of access tokens in every test that runs the API next to an issuer. */
export const TEST_API_AUDIENCE = 'http://api.portcullis.test';
