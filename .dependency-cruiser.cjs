// The import rules (docs/architecture.md "Rooms and the one direction"): `npm test` runs them.
const AUTH = '^apps/auth-server/src/';
const ROOT_FILES = `${AUTH}[^/]+\\.ts$`;

/** Rooms of the auth server, lowest first: each may import only the rooms before it. */
const LAYERS = ['kernel', 'data', 'oauth', 'identity', 'admin'];

const upward = LAYERS.map((room, i) => ({
  name: `auth-server-${room}-imports-upward`,
  comment: `${room}/ may import only ${LAYERS.slice(0, i).join(', ') || 'itself'} (and packages)`,
  severity: 'error',
  from: { path: `${AUTH}${room}/` },
  to: {
    path: [...LAYERS.slice(i + 1).map((higher) => `${AUTH}${higher}/`), ROOT_FILES],
  },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycle, type-only imports included',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...upward,
    {
      name: 'packages-import-apps',
      comment: "A package's source never imports an application (their tests and scripts may)",
      severity: 'error',
      from: { path: '^packages/(?!testing/)[^/]+/src/' },
      to: { path: '^apps/' },
    },
    {
      name: 'testing-light-entry-reaches-apps',
      comment:
        "@portcullis/testing's main entry loads no application (the auth server has its own)",
      severity: 'error',
      from: { path: '^packages/testing/src/index\\.ts$' },
      to: { path: '^apps/', reachable: true },
    },
    {
      name: 'apps-import-each-other',
      comment: "An application's source never imports another application's",
      severity: 'error',
      from: { path: '^apps/([^/]+)/src/' },
      to: { path: '^apps/', pathNot: ['^apps/$1/'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['node_modules', '(^|/)dist/', '^\\.test-output/', '\\.d\\.ts$'] },
    // Type-only imports count: a cycle of types is still a cycle to read.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    enhancedResolveOptions: {
      // Workspace packages resolve through their package.json exports to the apps and packages.
      exportsFields: ['exports'],
      extensions: ['.ts', '.tsx', '.mts', '.js', '.mjs'],
      conditionNames: ['import', 'types', 'default'],
    },
  },
};
