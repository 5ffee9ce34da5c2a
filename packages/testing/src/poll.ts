/** Returns the last value, so a timeout fails with what was seen. */
export async function until<T>(
  probe: () => Promise<T>,
  ok: (value: T) => boolean,
  ms: number,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** An `onError` for test fixtures: a failure in background work fails the test loudly. */
export function rethrow(error: unknown): never {
  throw error;
}
