import { resourceMetadataUrl, type ChallengeSettings } from '@portcullis/claims';
import type { ApiConfig } from '../config.js';
import { API_DPOP_ALGORITHMS } from './dpop.js';

/** How the API presents itself in every challenge: the package defaults and RFC 9728's URL. */
export function apiChallengeOf(config: Pick<ApiConfig, 'audience'>): ChallengeSettings {
  return Object.freeze({
    dpopAlgorithms: API_DPOP_ALGORITHMS,
    resourceMetadata: resourceMetadataUrl(config.audience),
  });
}
