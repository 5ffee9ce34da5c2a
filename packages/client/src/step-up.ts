// RFC 9470 step-up challenges, parsed per RFC 9110 §11.6.1 (several challenges in one header).

/** What a new sign-in must meet, from the API's challenge (README "Step-up"). */
export interface StepUpChallenge {
  /** For the authorization request's `acr_values` (space-separated there). */
  acrValues: string[];
  /** Seconds, for the authorization request's `max_age`. */
  maxAge?: number;
  description?: string;
}

export const INSUFFICIENT_USER_AUTHENTICATION = 'insufficient_user_authentication';

interface Challenge {
  scheme: string;
  params: Map<string, string>;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+/;

/** Splits a WWW-Authenticate value into challenges; unparsable rest is ignored. */
export function parseChallenges(header: string): Challenge[] {
  const challenges: Challenge[] = [];
  let rest = header;
  const skip = (pattern: RegExp) => (rest = rest.replace(pattern, ''));
  for (;;) {
    skip(/^[\s,]+/);
    const name = TOKEN.exec(rest)?.[0];
    if (name === undefined) return challenges;
    rest = rest.slice(name.length);
    skip(/^[ \t]*/);
    if (!rest.startsWith('=')) {
      challenges.push({ scheme: name.toLowerCase(), params: new Map() });
      continue;
    }
    skip(/^=[ \t]*/);
    let value: string;
    const quoted = /^"((?:[^"\\]|\\.)*)"/.exec(rest);
    if (quoted) {
      value = quoted[1]!.replace(/\\(.)/g, '$1');
      rest = rest.slice(quoted[0].length);
    } else {
      // A token value (or a token68 tail such as `abc==`).
      value = /^[^\s,]*/.exec(rest)![0];
      rest = rest.slice(value.length);
    }
    challenges.at(-1)?.params.set(name.toLowerCase(), value);
  }
}

/** The step-up challenge of a 401, from its WWW-Authenticate header or, failing that, its body. */
export function stepUpChallengeOf(headers: Headers, body: unknown): StepUpChallenge | undefined {
  const challenge = parseChallenges(headers.get('WWW-Authenticate') ?? '').find(
    (c) => c.params.get('error') === INSUFFICIENT_USER_AUTHENTICATION,
  );
  if (challenge) {
    return build(
      challenge.params.get('acr_values'),
      challenge.params.get('max_age'),
      challenge.params.get('error_description'),
    );
  }
  // A cross-origin caller may not see the header: the API repeats it in the body.
  if (typeof body !== 'object' || body === null) return undefined;
  const record = body as Record<string, unknown>;
  if (record['error'] !== INSUFFICIENT_USER_AUTHENTICATION) return undefined;
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return build(
    text(record['acr_values']),
    typeof record['max_age'] === 'number' ? String(record['max_age']) : undefined,
    text(record['message']),
  );
}

function build(
  acrValues: string | undefined,
  maxAge: string | undefined,
  description: string | undefined,
): StepUpChallenge {
  const challenge: StepUpChallenge = {
    acrValues: (acrValues ?? '').split(' ').filter(Boolean),
  };
  if (maxAge !== undefined && /^\d+$/.test(maxAge)) challenge.maxAge = Number(maxAge);
  if (description !== undefined) challenge.description = description;
  return challenge;
}

/** `acr_values` and `max_age` for `buildAuthorizeUrl({ …, extra: stepUpParams(error) })`. */
export function stepUpParams(challenge: StepUpChallenge): Record<string, string> {
  return {
    ...(challenge.acrValues.length > 0 ? { acr_values: challenge.acrValues.join(' ') } : {}),
    ...(challenge.maxAge === undefined ? {} : { max_age: String(challenge.maxAge) }),
  };
}
