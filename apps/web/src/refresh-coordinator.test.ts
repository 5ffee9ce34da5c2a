import { describe, expect, test } from '@jest/globals';
import { createRefreshCoordinator } from './refresh-coordinator.js';

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('refresh coordinator', () => {
  test('concurrent runs with one token share one rotation', async () => {
    const c = createRefreshCoordinator<string>({ graceMs: 1000 });
    const d = deferred<string>();
    let calls = 0;
    const rotate = () => {
      calls++;
      return d.promise;
    };
    const all = Promise.all([c.run('rt1', rotate), c.run('rt1', rotate), c.run('rt1', rotate)]);
    d.resolve('new');
    expect(await all).toEqual(['new', 'new', 'new']);
    expect(calls).toBe(1);
  });

  test('different tokens rotate independently', async () => {
    const c = createRefreshCoordinator<string>({ graceMs: 1000 });
    const a = await c.run('a', async () => 'A');
    const b = await c.run('b', async () => 'B');
    expect([a, b]).toEqual(['A', 'B']);
  });

  test('within the grace window a late run gets the same result; after it, rotation runs again', async () => {
    let now = 0;
    const c = createRefreshCoordinator<number>({ graceMs: 1000, now: () => now });
    let calls = 0;
    const rotate = async () => ++calls;
    expect(await c.run('rt', rotate)).toBe(1);
    now = 999;
    expect(await c.run('rt', rotate)).toBe(1);
    now = 1000;
    expect(await c.run('rt', rotate)).toBe(2);
  });

  test('a failure is shared by the concurrent runs and not remembered', async () => {
    const c = createRefreshCoordinator<string>({ graceMs: 1000 });
    const d = deferred<string>();
    const both = Promise.allSettled([c.run('rt', () => d.promise), c.run('rt', () => d.promise)]);
    d.reject(new Error('invalid_grant'));
    expect((await both).map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(await c.run('rt', async () => 'ok')).toBe('ok');
  });
});
