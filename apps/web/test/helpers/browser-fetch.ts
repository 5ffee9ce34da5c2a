import { browser as browserWithJar, CookieJar, type Browser } from '@portcullis/testing';

export type { Browser };

/**
 * Just enough of a browser for HTTP-level tests of the BFF (the shared cookie jar), sending
 * no Accept header of its own: the BFF's JSON answers are what these tests read.
 */
export const browser = (jar = new CookieJar()) => browserWithJar(jar, { accept: null });
