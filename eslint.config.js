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
          importNames: ['DataSource'],
          message: 'Reach tables through a *.repository.ts class (transactions: database/transactions.ts).',
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
    ignores: [
      'src/**/*.repository.ts',
      // The base class of every tenant repository.
      'src/common/tenancy/tenant-repository.ts',
      'src/database/**',
      'src/cli/**',
      // The composition root and the first-start demo seed, which run before and beside Nest.
      'src/main.ts',
      'src/app.ts',
      'src/demo/**',
      // Its own LISTEN connection and pg_notify: the invalidation channel, not table access.
      'src/common/credential-cache/credential-cache.ts',
      'src/**/*.spec.ts',
    ],
    rules: {
      ...DATABASE_DOOR,
      'no-restricted-syntax': [...DATABASE_DOOR['no-restricted-syntax'], OPERATOR_TENANT, IDENTITY_TENANT],
    },
  },
  {
    files: [
      'src/**/*.repository.ts',
      'src/common/tenancy/tenant-repository.ts',
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
    // Where the OAuth callback and the token sweep enter the workspace a stored row names.
    files: ['src/connections/oauth/stored-tenant.ts'],
    rules: { 'no-restricted-syntax': [...DATABASE_DOOR['no-restricted-syntax'], IDENTITY_TENANT] },
  },
  {
    // The guard is where a verified identity becomes the request's workspace.
    files: ['src/auth/request.guard.ts'],
    rules: { 'no-restricted-syntax': [...DATABASE_DOOR['no-restricted-syntax'], OPERATOR_TENANT] },
  },
  {
    files: ['**/*.spec.ts', '**/*.e2e-spec.ts', 'test/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
