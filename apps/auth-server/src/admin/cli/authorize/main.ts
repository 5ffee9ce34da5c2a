/**
 * `npm run authorize`: Authorization Code + PKCE as a native app (RFC 8252), README
 * "Flows, with curl". Exits 0 with tokens, 1 refused, 64 bad usage, 69 issuer unreachable,
 * 78 bad configuration.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import * as oidc from 'openid-client';
import { ACR } from '@portcullis/claims';
import { EX_CONFIG } from '@portcullis/observability';
import {
  ConfigError,
  DEMO_CLI_CLIENT_ID,
  DEMO_CLI_REDIRECT_URI,
  parseAuthorizeConfig,
  type AuthorizeConfig,
} from './config.js';

const USAGE = `usage: npm run -s authorize -- [options]

  --client ID          a public client with a loopback redirect URI (default ${DEMO_CLI_CLIENT_ID})
  --redirect-uri URI   its registered loopback URI; the port is chosen here
                       (default ${DEMO_CLI_REDIRECT_URI})
  --scope S            (default "openid profile email offline_access api")
  --login-hint EMAIL   fills in the sign-in page's email
  --acr mfa|pwd        asks for that sign-in strength (acr_values); mfa: a second factor
  --max-age SECONDS    asks for a sign-in at most that old
  --prompt login|consent  login: sign in again even with a session (e.g. as another user)
  --par                pushes the request first (RFC 9126) and opens only its request_uri
  --authorization-details JSON  RFC 9396 details to approve, e.g. one payment (README
                       "Payment authorization details (RFC 9396)")
  --field NAME         prints that field of the token response (e.g. access_token)
  --timeout SECONDS    how long to wait for the sign-in (default 300)

ISSUER names the authorization server (default http://localhost:4000); BROWSER, a
command that opens the sign-in URL.`;

const EX_USAGE = 64;
const EX_UNAVAILABLE = 69;

class UsageError extends Error {}

const ACRS: Record<string, string> = { mfa: ACR.mfa, pwd: ACR.password };

function options(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      client: { type: 'string', default: DEMO_CLI_CLIENT_ID },
      'redirect-uri': { type: 'string', default: DEMO_CLI_REDIRECT_URI },
      scope: { type: 'string', default: 'openid profile email offline_access api' },
      'login-hint': { type: 'string' },
      acr: { type: 'string' },
      'max-age': { type: 'string' },
      prompt: { type: 'string' },
      par: { type: 'boolean' },
      'authorization-details': { type: 'string' },
      field: { type: 'string' },
      timeout: { type: 'string', default: '300' },
      help: { type: 'boolean' },
    },
  });
  const redirect = new URL(values['redirect-uri']);
  if (redirect.protocol !== 'http:' || !['127.0.0.1', '[::1]'].includes(redirect.hostname)) {
    throw new UsageError('--redirect-uri must be a loopback http URI (http://127.0.0.1/…)');
  }
  const acr = values.acr === undefined ? undefined : ACRS[values.acr];
  if (values.acr !== undefined && !acr) throw new UsageError('--acr must be mfa or pwd');
  if (values.prompt !== undefined && !['login', 'consent'].includes(values.prompt)) {
    throw new UsageError('--prompt must be login or consent');
  }
  const timeout = Number(values.timeout);
  if (!(timeout > 0)) throw new UsageError('--timeout must be a number of seconds');
  if (values['max-age'] !== undefined && !/^\d+$/.test(values['max-age'])) {
    throw new UsageError('--max-age must be a number of seconds');
  }
  const details = values['authorization-details'];
  if (details !== undefined && !isJsonArray(details)) {
    throw new UsageError('--authorization-details must be a JSON array');
  }
  return { ...values, redirect, acr, timeout };
}

function isJsonArray(text: string): boolean {
  try {
    return Array.isArray(JSON.parse(text));
  } catch {
    return false;
  }
}

/** Opens `url` with BROWSER, or on a terminal with the desktop's opener; never fails. */
function openBrowser(url: string, config: AuthorizeConfig): void {
  const opener =
    config.browser ??
    (process.stderr.isTTY
      ? { darwin: 'open', win32: 'start ""', linux: 'xdg-open' }[process.platform as string]
      : undefined);
  if (!opener) return;
  // The URL is an argument of the shell, never part of the command line it parses.
  const child =
    process.platform === 'win32'
      ? spawn(`${opener} "${url}"`, { shell: true, stdio: 'ignore', detached: true })
      : spawn('/bin/sh', ['-c', `${opener} "$1"`, 'sh', url], { stdio: 'ignore', detached: true });
  child.on('error', () => {});
  child.unref();
}

function listen(server: Server, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host.replace(/^\[|\]$/g, ''), () =>
      resolve((server.address() as AddressInfo).port),
    );
  });
}

/** Waits for the browser's request to `redirectUri`'s path; answers it with `page`. */
function callback(server: Server, redirectUri: URL, timeoutSeconds: number): Promise<URL> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no sign-in within ${timeoutSeconds} s`)),
      timeoutSeconds * 1000,
    );
    server.on('request', (req, res) => {
      const url = new URL(req.url ?? '/', redirectUri);
      if (url.pathname !== redirectUri.pathname) {
        res.writeHead(404).end();
        return;
      }
      const error = url.searchParams.get('error');
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
      res.end(error ? `Sign-in refused: ${error}` : 'Signed in. You may close this tab.');
      clearTimeout(timer);
      resolve(url);
    });
  });
}

async function authorize(argv: string[], config: AuthorizeConfig): Promise<number> {
  const o = options(argv);
  const issuer = new URL(config.issuer);
  const settings = issuer.protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : {};
  let server: oidc.Configuration;
  try {
    server = await oidc.discovery(issuer, o.client, undefined, oidc.None(), settings);
  } catch (error) {
    process.stderr.write(`cannot read ${issuer.href} discovery: ${(error as Error).message}\n`);
    return EX_UNAVAILABLE;
  }
  const listener = createServer();
  try {
    const port = await listen(listener, o.redirect.hostname);
    const redirectUri = new URL(o.redirect);
    redirectUri.port = String(port);
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const params: Record<string, string> = {
      redirect_uri: redirectUri.href,
      scope: o.scope,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      ...(o['login-hint'] ? { login_hint: o['login-hint'] } : {}),
      ...(o.acr ? { acr_values: o.acr } : {}),
      ...(o['max-age'] ? { max_age: o['max-age'] } : {}),
      ...(o.prompt ? { prompt: o.prompt } : {}),
      ...(o['authorization-details'] ? { authorization_details: o['authorization-details'] } : {}),
    };
    const url = o.par
      ? await oidc.buildAuthorizationUrlWithPAR(server, params)
      : oidc.buildAuthorizationUrl(server, params);
    process.stderr.write(
      `Sign in at:\n\n  ${url.href}\n\nWaiting for the browser at ${redirectUri.href} …\n`,
    );
    const arrived = callback(listener, redirectUri, o.timeout);
    openBrowser(url.href, config);
    const landed = await arrived;
    const tokens = await oidc.authorizationCodeGrant(server, landed, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    const body = { ...tokens } as Record<string, unknown>;
    if (o.field) {
      if (body[o.field] === undefined) {
        process.stderr.write(`the token response has no ${o.field}\n`);
        return 1;
      }
      process.stdout.write(`${String(body[o.field])}\n`);
    } else {
      process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
    }
    return 0;
  } finally {
    listener.closeAllConnections();
    listener.close();
  }
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  try {
    return await authorize(argv, parseAuthorizeConfig());
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      return EX_CONFIG;
    }
    if (
      error instanceof UsageError ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
      return EX_USAGE;
    }
    const e = error as Error & { error?: string; error_description?: string };
    process.stderr.write(
      `sign-in failed: ${e.error ? `${e.error}: ${e.error_description ?? ''}` : e.message}\n`,
    );
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
