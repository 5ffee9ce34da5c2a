import { pino, type DestinationStream, type Logger } from 'pino';

/**
 * Field names whose values are credentials, wherever they appear in a log object (top
 * level or one level down, the depth pino's redaction paths reach with `*`).
 */
const SECRET_FIELDS = [
  'password',
  'newPassword',
  'client_secret',
  'clientSecret',
  'access_token',
  'accessToken',
  'refresh_token',
  'refreshToken',
  'id_token',
  'idToken',
  'token',
  'code_verifier',
  'apiKey',
  'api_key',
  'secret',
  'cookie',
  'sid',
  'authorization',
  'adminToken',
];

const SECRET_HEADERS = [
  'authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'proxy-authorization',
];

/** pino redaction paths (fast-redact syntax) for every place a secret can be logged. */
export const REDACT_PATHS: readonly string[] = [
  ...SECRET_FIELDS.flatMap((f) => [f, `*.${f}`]),
  ...SECRET_HEADERS.flatMap((h) => [
    `headers["${h}"]`,
    `req.headers["${h}"]`,
    `res.headers["${h}"]`,
    `request.headers["${h}"]`,
    `response.headers["${h}"]`,
  ]),
];

// Bearer JWTs (three base64url parts starting with `eyJ`) and API keys in free text.
const TOKEN_IN_TEXT = /\beyJ[\w-]+\.[\w-]+\.[\w-]*|\bsk_live_[\w-]+/g;

/** Replaces token-shaped substrings of a message or error text with `[Redacted]`. */
export function scrubText(text: string): string {
  return text.replace(TOKEN_IN_TEXT, '[Redacted]');
}

/**
 * Header objects keep their shape but lose credential values: a serializer for `headers`
 * fields that a caller logs whole (redaction paths only reach fixed depths).
 */
export function serializeHeaders(headers: unknown): unknown {
  if (typeof headers !== 'object' || headers === null) return headers;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = SECRET_HEADERS.includes(name.toLowerCase()) ? '[Redacted]' : value;
  }
  return out;
}

/** Errors keep name, code and stack; token-shaped text in the message is scrubbed. */
function serializeError(error: unknown): unknown {
  const serialized = pino.stdSerializers.err(error as Error) as unknown as Record<string, unknown>;
  if (typeof serialized !== 'object' || serialized === null) return serialized;
  for (const key of ['message', 'stack']) {
    if (typeof serialized[key] === 'string') serialized[key] = scrubText(serialized[key]);
  }
  return serialized;
}

export interface LoggerOptions {
  level?: string;
  /** Fields on every line, e.g. `{ app: 'api' }`; default none (no pid or hostname). */
  base?: Record<string, unknown>;
  /** Where lines go; default stdout. Tests pass a stream to read them back. */
  destination?: DestinationStream;
}

/**
 * The one logger factory of the project: JSON lines, with credentials redacted by field
 * path, by a `headers` serializer and, for messages and errors, by token shape. Logging
 * a whole request or a caught library error therefore never writes a token out.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: options.base ?? {},
      redact: { paths: [...REDACT_PATHS], censor: '[Redacted]' },
      serializers: { err: serializeError, error: serializeError, headers: serializeHeaders },
      hooks: {
        logMethod(args, method) {
          const scrubbed = args.map((a) => (typeof a === 'string' ? scrubText(a) : a));
          method.apply(this, scrubbed as Parameters<typeof method>);
        },
      },
    },
    options.destination,
  );
}
