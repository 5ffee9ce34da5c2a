import { describe, expect, it } from '@jest/globals';
import { ConfigError, parseAuthConfig } from './config.js';

function problems(env: Record<string, string>): string[] {
  try {
    parseAuthConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('REGISTRATION*, CLIENT_ID_METADATA_*', () => {
  it('defaults: registration off, metadata documents on from any host', () => {
    expect(parseAuthConfig({}).agentClients).toEqual({
      registration: {
        mode: 'off',
        scopes: ['openid', 'profile', 'email', 'offline_access', 'api'],
        grantTypes: ['authorization_code', 'refresh_token'],
        roles: [],
        ipLimit: 10,
        windowSec: 3600,
        tokenTtl: 86_400,
      },
      clientIdMetadata: { enabled: true, hosts: [] },
    });
  });

  it('reads lists separated by spaces or commas, hosts lower-cased', () => {
    const { agentClients } = parseAuthConfig({
      REGISTRATION: 'open',
      REGISTRATION_SCOPES: 'openid, orders:read',
      REGISTRATION_ROLES: 'viewer',
      CLIENT_ID_METADATA_DOCUMENTS: 'off',
      CLIENT_ID_METADATA_HOSTS: 'Agents.Example.com, *.example.org',
    });
    expect(agentClients.registration).toMatchObject({
      mode: 'open',
      scopes: ['openid', 'orders:read'],
      roles: ['viewer'],
    });
    expect(agentClients.clientIdMetadata).toEqual({
      enabled: false,
      hosts: ['agents.example.com', '*.example.org'],
    });
  });

  it('names the variable of an unknown scope, grant type, role, mode or host', () => {
    expect(problems({ REGISTRATION: 'yes' })[0]).toMatch(/^REGISTRATION: /);
    // Which scopes exist is the registered APIs' (checked at start: resource-servers.test.ts).
    expect(problems({ REGISTRATION_SCOPES: 'openid phone' })).toEqual([]);
    expect(problems({ REGISTRATION_SCOPES: 'openid "quoted"' })[0]).toMatch(
      /^REGISTRATION_SCOPES: must list scope values/,
    );
    expect(problems({ REGISTRATION_GRANT_TYPES: 'password' })[0]).toMatch(
      /^REGISTRATION_GRANT_TYPES: /,
    );
    expect(problems({ REGISTRATION_ROLES: 'Root!' })[0]).toMatch(/^REGISTRATION_ROLES: /);
    expect(problems({ CLIENT_ID_METADATA_HOSTS: 'https://a.example' })[0]).toMatch(
      /^CLIENT_ID_METADATA_HOSTS: /,
    );
  });
});
