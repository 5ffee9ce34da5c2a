/** The one root of the auth server's own errors: a status and whether the message may be shown. */
export class AuthServerError extends Error {
  readonly status: number;
  readonly expose: boolean;
  /** The message on a page, in the page's language: a catalogue key and its values (docs/ui.md). */
  readonly uiText: { key: string; values?: Record<string, unknown> } | undefined;
  constructor(
    message: string,
    options: {
      status: number;
      expose: boolean;
      cause?: unknown;
      uiText?: AuthServerError['uiText'];
    },
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = options.status;
    this.expose = options.expose;
    this.uiText = options.uiText;
  }
}
