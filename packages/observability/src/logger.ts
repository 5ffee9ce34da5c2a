import { pino, type DestinationStream, type Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';

// Credential fields, at top level or one down (the depth pino's `*` paths reach).
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
  // DPoP proofs, and the one-time codes of OAuth (RFC 8628), TOTP and recovery.
  'dpop',
  'user_code',
  'device_code',
  'recovery_code',
  'recoveryCode',
  'totp',
];

// Request parameters, where `code` is an OAuth or TOTP code; elsewhere `code` is an error's.
const PARAMETER_OBJECTS = ['body', 'query', 'params', 'form'];

const SECRET_HEADERS = [
  'authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'proxy-authorization',
  'dpop',
];

/** pino redaction paths (fast-redact syntax) for every place a secret can be logged. */
export const REDACT_PATHS: readonly string[] = [
  ...SECRET_FIELDS.flatMap((f) => [f, `*.${f}`]),
  ...PARAMETER_OBJECTS.flatMap((o) => [`${o}.code`, `*.${o}.code`]),
  ...SECRET_HEADERS.flatMap((h) => [
    `headers["${h}"]`,
    `req.headers["${h}"]`,
    `res.headers["${h}"]`,
    `request.headers["${h}"]`,
    `response.headers["${h}"]`,
  ]),
];

// Bearer JWTs and DPoP proofs (three base64url parts starting with `eyJ`) and API keys in free text.
const TOKEN_IN_TEXT = /\beyJ[\w-]+\.[\w-]+\.[\w-]*|\bsk_live_[\w-]+/g;

/** Credential parameters of a query string or form body quoted in text (`?code=...`, `&password=...`). */
const PARAMETER_IN_TEXT =
  /(^|[?&;\s"'])((?:code|user_code|device_code|recovery_code|totp|code_verifier|password|client_secret|access_token|refresh_token|id_token|token|dpop)=)[^&\s#"';]+/gi;

/** Replaces token-shaped substrings and credential parameters of a message or error text with `[Redacted]`. */
export function scrubText(text: string): string {
  return text.replace(TOKEN_IN_TEXT, '[Redacted]').replace(PARAMETER_IN_TEXT, '$1$2[Redacted]');
}

/** A `headers` serializer: redaction paths only reach fixed depths. */
export function serializeHeaders(headers: unknown): unknown {
  if (typeof headers !== 'object' || headers === null) return headers;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = SECRET_HEADERS.includes(name.toLowerCase()) ? '[Redacted]' : value;
  }
  return out;
}

// Byte buffers left out: parser errors carry the raw request (`rawPacket`), which no text scrub sees.
function scrubFields(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return scrubText(value);
  if (typeof value !== 'object' || value === null || depth > 4) return value;
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return undefined;
  if (Array.isArray(value)) return value.map((v) => scrubFields(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (key === 'rawPacket') continue;
    const scrubbed = scrubFields(field, depth + 1);
    if (scrubbed !== undefined) out[key] = scrubbed;
  }
  return out;
}

function serializeError(error: unknown): unknown {
  const serialized = pino.stdSerializers.err(error as Error) as unknown;
  return typeof serialized === 'object' && serialized !== null
    ? scrubFields(serialized, 0)
    : serialized;
}

export type LogFormat = 'json' | 'pretty';

export interface LoggerOptions {
  level?: string;
  /** Fields on every line, e.g. `{ app: 'api' }`; default none (no pid or hostname). */
  base?: Record<string, unknown>;
  destination?: DestinationStream;
  /** `json` or `pretty`; default pretty on a terminal, else json. */
  format?: LogFormat | undefined;
}

// Formatted from the JSON pino already redacted, so both formats hide the same secrets.
function prettyLines(destination: DestinationStream, colorize: boolean): DestinationStream {
  const format = prettyFactory({
    colorize,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
    singleLine: true,
  });
  const flushable = destination as DestinationStream & { flush?: (cb: () => void) => void };
  return {
    write: (line: string) => destination.write(format(line)),
    ...(flushable.flush ? { flush: (cb: () => void) => flushable.flush!(cb) } : {}),
  } as DestinationStream;
}

/** JSON (or pretty) lines with credentials redacted by path, headers serializer and token shape. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const toTerminal = options.destination === undefined && process.stdout.isTTY === true;
  const format = options.format ?? (toTerminal ? 'pretty' : 'json');
  // Synchronous stdout: an asynchronous write still in flight at exit would land after later lines.
  const stdout = () => pino.destination({ dest: 1, sync: true });
  const destination =
    format === 'pretty'
      ? prettyLines(options.destination ?? stdout(), toTerminal)
      : (options.destination ?? stdout());
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
    destination,
  );
}
