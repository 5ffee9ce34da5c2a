import type Provider from 'oidc-provider';

/** The running Provider, read per request (key rotation swaps it): the provider host. */
export interface CurrentProvider {
  readonly current: Provider;
}
