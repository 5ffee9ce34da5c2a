/** The one root of the auth server's own errors: a status and whether the message may be shown. */
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
