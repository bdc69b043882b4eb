import tseslint from 'typescript-eslint';

/**
 * One door to the database (docs/architecture.md): only repositories, src/database/ and the CLI
 * hold a DataSource or run SQL; only the CLI, jobs and tests name a workspace by hand.
 */
const DATABASE_DOOR = {
  'no-restricted-imports': [
    'error',
    {
      paths: [
        {
          name: 'typeorm',
          importNames: ['DataSource', 'EntityManager'],
          message:
            'Reach tables through a *.repository.ts class; a service holds a Transaction token (common/tenancy/transactions.ts), never an EntityManager.',
        },
      ],
    },
  ],
  'no-restricted-syntax': [
    'error',
    {
      selector: "CallExpression[callee.property.name='getRepository']",
      message: 'Reach tables through a *.repository.ts class built from TypeOrmModule.forFeature.',
    },
    {
      selector: "CallExpression[callee.property.name='query'][arguments.0.type=/Literal$/]",
      message: 'SQL belongs in a *.repository.ts class.',
    },
    {
      selector: "CallExpression[callee.property.name='query'][arguments.0.type='TemplateLiteral']",
      message: 'SQL belongs in a *.repository.ts class.',
    },
  ],
};

const OPERATOR_TENANT = {
  selector: "MemberExpression[object.name='Tenant'][property.name='forOperator']",
  message: 'Only the CLI, jobs and tests name a workspace by hand; requests get theirs from the guard (TenantContext).',
};
const IDENTITY_TENANT = {
  selector: "MemberExpression[object.name='Tenant'][property.name='of']",
  message: 'Only the request guard turns an identity into the tenant context.',
};

/**
 * Layers run one way (docs/architecture.md, "Layers"): the shared floors below every feature
 * import only each other, downwards in this order, and never a feature folder. A folder not named
 * here is a feature. test/architecture.spec.ts holds the same rules over the whole import graph,
 * and also that no two feature folders import each other.
 */
const SHARED_FLOORS = ['config', 'database', 'common', 'metrics', 'redis', 'logging', 'openapi'];
const FEATURES = [
  'ai-model-instances',
  'api-keys',
  'audiences',
  'auth',
  'cli',
  'connections',
  'customers',
  'demo',
  'destinations',
  'health',
  'idempotency',
  'imports',
  'jobs',
  'memberships',
  'mcp',
  'mcp-tokens',
  'people',
  'signals',
  'syncs',
  'users',
  'web',
];

/** The import patterns a file of `floor` may not use: every feature, and every floor above it. */
function layerPatterns(floor) {
  const above = SHARED_FLOORS.slice(SHARED_FLOORS.indexOf(floor) + 1);
  return [
    {
      regex: `^(\\.\\./)+(${FEATURES.join('|')})/`,
      message: `src/${floor}/ is a shared floor: it never imports a feature folder (layers run one way).`,
    },
    ...(above.length > 0
      ? [{ regex: `^(\\.\\./)+(${above.join('|')})/`, message: `src/${floor}/ sits below ${above.join(', ')}: import downwards only.` }]
      : []),
  ];
}

/** The layer rule for one floor, with the database door's paths where that door applies too. */
function layerRule(floor, withDoor) {
  return {
    files: [`src/${floor}/**/*.ts`],
    ignores: withDoor ? DOOR_EXEMPT : [],
    rules: {
      'no-restricted-imports': [
        'error',
        { ...(withDoor ? { paths: DATABASE_DOOR['no-restricted-imports'][1].paths } : {}), patterns: layerPatterns(floor) },
      ],
    },
  };
}

/** Files that may hold the DataSource or run SQL (see DATABASE_DOOR). */
const DOOR_EXEMPT = [
  'src/**/*.repository.ts',
  // The base classes of every repository, and the one place transactions open.
  'src/common/tenancy/entity-repository.ts',
  'src/common/tenancy/tenant-repository.ts',
  'src/common/tenancy/transactions.ts',
  'src/database/**',
  'src/cli/**',
  // The composition root and the first-start demo seed, which run before and beside Nest.
  'src/main.ts',
  'src/app.ts',
  'src/demo/**',
  // Its own LISTEN connection and pg_notify: the invalidation channel, not table access.
  'src/common/credential-cache/credential-cache.ts',
  'src/**/*.spec.ts',
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.data/**', 'coverage/**', 'web/dist/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', 'web/**/*.tsx'],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
        emitDecoratorMetadata: true,
        experimentalDecorators: true,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      'no-console': 'error',
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: DOOR_EXEMPT,
    rules: {
      ...DATABASE_DOOR,
      'no-restricted-syntax': [...DATABASE_DOOR['no-restricted-syntax'], OPERATOR_TENANT, IDENTITY_TENANT],
    },
  },
  {
    files: [
      'src/**/*.repository.ts',
      'src/common/tenancy/tenant-repository.ts',
      'src/common/tenancy/transactions.ts',
      'src/database/**/*.ts',
      'src/main.ts',
      'src/app.ts',
      'src/demo/**/*.ts',
      'src/common/credential-cache/credential-cache.ts',
    ],
    rules: { 'no-restricted-syntax': ['error', OPERATOR_TENANT, IDENTITY_TENANT] },
  },
  {
    // The first-start demo seed is a job: it fills the demo workspace it has just created.
    files: ['src/demo/demo-data.ts'],
    rules: { 'no-restricted-syntax': ['error', IDENTITY_TENANT] },
  },
  {
    // Where the OAuth callback, the token sweep and the jobs enter the workspace a stored row names.
    files: [
      'src/connections/oauth/stored-tenant.ts',
      'src/imports/import-tenant.ts',
      'src/memberships/membership-tenant.ts',
      'src/syncs/sync-tenant.ts',
      'src/signal-events/signal-events-tenant.ts',
      'src/webhooks/webhook-tenant.ts',
    ],
    rules: { 'no-restricted-syntax': [...DATABASE_DOOR['no-restricted-syntax'], IDENTITY_TENANT] },
  },
  {
    // The guard is where a verified identity becomes the request's workspace.
    files: ['src/auth/request.guard.ts'],
    rules: { 'no-restricted-syntax': [...DATABASE_DOOR['no-restricted-syntax'], OPERATOR_TENANT] },
  },
  ...SHARED_FLOORS.map((floor) => layerRule(floor, floor !== 'database')),
  {
    // The layer rule's file is replaced by the door exemptions above; these still keep the layers.
    files: [
      'src/common/tenancy/tenant-repository.ts',
      'src/common/tenancy/transactions.ts',
      'src/common/credential-cache/credential-cache.ts',
    ],
    rules: { 'no-restricted-imports': ['error', { patterns: layerPatterns('common') }] },
  },
  {
    files: ['**/*.spec.ts', '**/*.e2e-spec.ts', 'test/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
