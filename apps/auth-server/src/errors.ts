/**
 * The one root of the auth server's own errors: an HTTP status and whether its message
 * may be shown to the user (`expose`), as oidc-provider's errors carry them. OAuth
 * endpoints keep oidc-provider's errors; the pages and the admin API throw these.
 */
export class AuthServerError extends Error {
  readonly status: number;
  readonly expose: boolean;
  constructor(message: string, options: { status: number; expose: boolean; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = options.status;
    this.expose = options.expose;
  }
}
