import argon2 from 'argon2';
import { measureHttp, measureOps, startTarget } from './lib.js';

export interface Row {
  section: string;
  metric: string;
  value: number | string;
  goal?: string;
}

const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;

/** Each section measures its figures and the ratios between them within the same run. */
export const sections: Record<string, () => Promise<Row[]>> = {
  async http() {
    const koa = await startTarget('koa-hello.ts');
    try {
      const bare = await measureHttp(koa.info['url']!);
      return [
        { section: 'http', metric: 'bare Koa req/s', value: bare.requestsPerSecond },
        { section: 'http', metric: 'bare Koa p99 ms', value: bare.p99Ms },
      ];
    } finally {
      await koa.stop();
    }
  },

  async argon2() {
    // The same parameters packages/accounts uses (OWASP minimum for argon2id).
    const { ARGON2_OPTIONS } = await import('@portcullis/accounts');
    const hash = await argon2.hash('benchmark password', ARGON2_OPTIONS);
    const rate = await measureOps(() => argon2.verify(hash, 'benchmark password'));
    return [{ section: 'argon2', metric: 'bare argon2id verify/s (1 thread)', value: rate }];
  },
};

void ratio;
