// Mapped over the database and Redis clients in Jest's `unit` project (jest.config.mjs): importing
// one is harmless, using one fails the test, since a unit test runs on one database only.
function refuse() {
  throw new Error(
    'a unit test used a database or Redis client: take it out of UNIT_TESTS in jest.config.mjs',
  );
}

const client = new Proxy(function () {}, {
  apply: refuse,
  construct: refuse,
  get: (_target, key) => (key === 'then' || typeof key === 'symbol' ? undefined : client),
});

export default client;
export { client as PGlite, client as Redis };
