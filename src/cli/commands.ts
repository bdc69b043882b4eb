import { parseArgs } from 'node:util';
import type { INestApplicationContext, Type } from '@nestjs/common';
import type { ApiKey, ApiKeyScope } from '../api-keys/api-key.entity.js';
import { type AppConfig, ConfigError, loadConfig } from '../config/app-config.js';
import type { Platform } from '../connections/connection.entity.js';
import type { PreparedDatabase } from '../database/database.js';
import { USER_ROLES, type UserRole } from '../common/access/user-role.js';
import type { User } from '../users/user.entity.js';

export interface CliOutput {
  write(chunk: string): unknown;
}

export interface CliIo {
  stdout: CliOutput;
  stderr: CliOutput;
}

export type CliEnv = Record<string, string | undefined>;

export interface CommandArgs {
  /** Every option is a string: numbers and choices are checked by the command that reads them. */
  values: Record<string, string | undefined>;
  positionals: string[];
}

export interface CommandContext {
  config: AppConfig;
  /**
   * Connects and migrates, then starts the Nest application context of these feature modules
   * (src/cli/cli.module.ts). Called once, when the arguments have been checked: a typo must not
   * start the embedded cluster or touch the schema.
   */
  app(...features: Type[]): Promise<INestApplicationContext>;
}

export type CommandHandler = (args: CommandArgs, context: CommandContext) => Promise<object>;

export interface Command {
  /** The arguments part of the usage line, as SPEC section 9 spells it. */
  usage: string;
  options: readonly string[];
  /** Names of the required positional arguments, e.g. `['ID']` for `apikey revoke ID`. */
  positionals?: readonly string[];
  run: CommandHandler;
}

/** Bad invocation (exit 2), as opposed to a refused or failed operation (exit 1). */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly commandName?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

const PROGRAM = 'audience-admin';
// Ids are bigint, read as JavaScript numbers: exact up to 2^53 - 1 (docs/scale-out.md).
const MAX_ID = Number.MAX_SAFE_INTEGER;

/**
 * The entities' enums, repeated here so that a mistyped choice is refused without loading TypeORM;
 * `satisfies Record<…, true>` fails to compile if a value is added to or removed from the entity.
 */
const API_KEY_SCOPE_CHOICES = Object.keys({ read: true, write: true } satisfies Record<ApiKeyScope, true>) as ApiKeyScope[];
const PLATFORM_CHOICES = Object.keys({ google_ads: true, meta_ads: true } satisfies Record<Platform, true>) as Platform[];

/**
 * Keyed by the words that select the command. Handlers import what they need only when they run:
 * loading Nest, TypeORM and argon2 costs most of a run's time, and `--help` or a typo should not pay for it.
 */
export const COMMANDS: Readonly<Record<string, Command>> = {
  'customer create': {
    usage: '--name N',
    options: ['name'],
    async run(args, context) {
      const name = requiredOption(args, 'name');
      const { CustomersService } = await import('../customers/customers.service.js');
      const customer = await (await customersApp(context)).get(CustomersService).create(name);
      return { id: customer.id, name: customer.name, created_at: customer.createdAt.toISOString() };
    },
  },
  'user create': {
    usage: '--customer ID --email E --password P [--role admin|editor|viewer]',
    options: ['customer', 'email', 'password', 'role'],
    async run(args, context) {
      const customerId = integerOption(args, 'customer');
      const email = requiredOption(args, 'email');
      const password = requiredOption(args, 'password');
      const role = args.values.role ?? 'viewer';
      if (!isUserRole(role)) throw new UsageError(`--role must be one of ${USER_ROLES.join(', ')} (got "${role}")`);
      const users = await usersService(context);
      return userJson(await users.create({ customerId, email, password, role }));
    },
  },
  'user deactivate': {
    usage: '--email E',
    options: ['email'],
    async run(args, context) {
      const email = requiredOption(args, 'email');
      const users = await usersService(context);
      return userJson(await users.deactivate(email));
    },
  },
  'apikey create': {
    usage: '--customer ID --name N [--scope read|write] [--expires-in-days D]',
    options: ['customer', 'name', 'scope', 'expires-in-days'],
    async run(args, context) {
      const customerId = integerOption(args, 'customer');
      const name = requiredOption(args, 'name');
      const scope = args.values.scope ?? 'write';
      if (!isApiKeyScope(scope)) throw new UsageError(`--scope must be one of ${API_KEY_SCOPE_CHOICES.join(', ')} (got "${scope}")`);
      const expiresInDays = wholeNumberOption(args, 'expires-in-days');
      const apiKeys = await apiKeysService(context);
      const { apiKey, key } = await apiKeys.create({ customerId, name, scope, expiresInDays });
      // SPEC section 2: the key is shown here and never again; only its prefix and hash are stored.
      return { ...newApiKeyJson(apiKey), key };
    },
  },
  'apikey list': {
    usage: '--customer ID',
    options: ['customer'],
    async run(args, context) {
      const customerId = integerOption(args, 'customer');
      const app = await apiKeysApp(context);
      const { ApiKeysService } = await import('../api-keys/api-keys.service.js');
      // An empty list for a mistyped id would read as "this customer has no keys".
      await requireCustomer(app, customerId);
      return { api_keys: (await app.get(ApiKeysService).list(customerId)).map(apiKeyJson) };
    },
  },
  'apikey revoke': {
    usage: 'ID',
    options: [],
    positionals: ['ID'],
    async run(args, context) {
      const id = parseId(args.positionals[0], 'ID');
      const apiKeys = await apiKeysService(context);
      return apiKeyJson(await apiKeys.revoke(id));
    },
  },
  'apikey rotate': {
    usage: 'ID [--grace-hours H]',
    options: ['grace-hours'],
    positionals: ['ID'],
    async run(args, context) {
      const id = parseId(args.positionals[0], 'ID');
      const graceHours = wholeNumberOption(args, 'grace-hours');
      const apiKeys = await apiKeysService(context);
      const { apiKey, key, previous } = await apiKeys.rotate(id, graceHours);
      return {
        ...newApiKeyJson(apiKey),
        key,
        previous: { id: previous.id, prefix: previous.prefix, expires_at: isoOrNull(previous.expiresAt) },
      };
    },
  },
  'connection create': {
    usage: '--customer ID --platform google_ads|meta_ads --account-id X --account-name N',
    options: ['customer', 'platform', 'account-id', 'account-name'],
    async run(args, context) {
      const customerId = integerOption(args, 'customer');
      const platform = requiredOption(args, 'platform');
      if (!isPlatform(platform)) throw new UsageError(`--platform must be one of ${PLATFORM_CHOICES.join(', ')} (got "${platform}")`);
      const externalAccountId = requiredOption(args, 'account-id');
      const accountName = requiredOption(args, 'account-name');
      const app = await connectionsApp(context);
      const { Tenant } = await import('../common/tenancy/tenant.js');
      const { TenantContext } = await import('../common/tenancy/tenant-context.js');
      const { CustomersService } = await import('../customers/customers.service.js');
      const { ConnectionsRepository } = await import('../connections/connections.repository.js');
      const { registerExternalConnection } = await import('../connections/external-connections.js');
      const { toConnectionDto } = await import('../connections/connection.mapper.js');
      const connections = app.get(ConnectionsRepository);
      const customers = app.get(CustomersService);
      // The operator names the workspace; everything below runs in it, as a request would.
      const tenants = app.get(TenantContext);
      const connection = await tenants.run(Tenant.forOperator(customerId), () =>
        registerExternalConnection(connections, (id) => customers.exists(id), { customerId, platform, externalAccountId, accountName }),
      );
      return toConnectionDto(connection);
    },
  },
  'connection reencrypt': {
    usage: '',
    options: [],
    async run(_args, context) {
      const app = await connectionsApp(context);
      const { ConnectionMaintenanceRepository } = await import('../connections/oauth/connection-maintenance.repository.js');
      const { TokenCipher } = await import('../connections/token-cipher.js');
      const { reencryptTokens } = await import('../connections/oauth/token-reencryption.js');
      return reencryptTokens(app.get(ConnectionMaintenanceRepository), app.get(TokenCipher));
    },
  },
  migrate: {
    usage: '',
    options: [],
    async run(_args, context) {
      // Opening the database is what applies pending migrations; what is left is to report them.
      const app = await context.app();
      const { DataSource } = await import('typeorm');
      const dataSource = app.get(DataSource);
      const table = dataSource.driver.escape(dataSource.options.migrationsTableName ?? 'migrations');
      const rows: { name: string }[] = await dataSource.query(`SELECT name FROM ${table} ORDER BY "timestamp", id`);
      return { migrations: 'applied', applied: rows.map((row) => row.name) };
    },
  },
};

/*
 * Each command's application context holds only the feature modules it uses: loading a module
 * loads its entities, services and their libraries (argon2 for users), which is most of a run's
 * time. One import at a time: Jest's ESM loader fails on concurrent imports that share dependencies.
 */

async function customersApp(context: CommandContext): Promise<INestApplicationContext> {
  const { CustomersModule } = await import('../customers/customers.module.js');
  return context.app(CustomersModule);
}

async function usersService(context: CommandContext) {
  const { UsersModule } = await import('../users/users.module.js');
  const { UsersService } = await import('../users/users.service.js');
  return (await context.app(UsersModule)).get(UsersService);
}

async function apiKeysApp(context: CommandContext): Promise<INestApplicationContext> {
  const { ApiKeysModule } = await import('../api-keys/api-keys.module.js');
  return context.app(ApiKeysModule);
}

async function apiKeysService(context: CommandContext) {
  const app = await apiKeysApp(context);
  const { ApiKeysService } = await import('../api-keys/api-keys.service.js');
  return app.get(ApiKeysService);
}

async function connectionsApp(context: CommandContext): Promise<INestApplicationContext> {
  // Connections hold OAuth tokens encrypted under the server's key, which this run must share.
  if (context.config.encryptionKey.length === 0) {
    throw new ConfigError([
      `ENCRYPTION_KEY is not set, and ${context.config.dataDir} holds no development key: on a DATABASE_URL the CLI uses the ` +
        "server's key and never makes one up. Set ENCRYPTION_KEY (and ENCRYPTION_PREVIOUS_KEYS) as the server has them.",
    ]);
  }
  const { ConnectionsModule } = await import('../connections/connections.module.js');
  return context.app(ConnectionsModule);
}

async function requireCustomer(app: INestApplicationContext, customerId: number): Promise<void> {
  const { CustomersRepository } = await import('../customers/customers.repository.js');
  const { ApiError } = await import('../common/errors/api-error.js');
  if (!(await app.get(CustomersRepository).exists(customerId))) {
    throw ApiError.field('customer', `Customer ${customerId} does not exist.`);
  }
}

/** Field by field, so a column added to the entity (or the password hash) never leaks by default. */
function userJson(user: User): object {
  return {
    id: user.id,
    email: user.email,
    customer: user.customerId,
    role: user.role,
    is_active: user.isActive,
    date_joined: user.dateJoined.toISOString(),
  };
}

/** Field by field: never the key hash. The key itself is not stored, so it cannot leak from here. */
function apiKeyJson(apiKey: ApiKey): object {
  return {
    id: apiKey.id,
    customer: apiKey.customerId,
    name: apiKey.name,
    prefix: apiKey.prefix,
    scope: apiKey.scope,
    created_at: apiKey.createdAt.toISOString(),
    expires_at: isoOrNull(apiKey.expiresAt),
    revoked_at: isoOrNull(apiKey.revokedAt),
    last_used_at: isoOrNull(apiKey.lastUsedAt),
    replaced_by: apiKey.replacedById ?? null,
  };
}

/** What `create` and `rotate` print besides the key itself. */
function newApiKeyJson(apiKey: ApiKey): object {
  return {
    id: apiKey.id,
    customer: apiKey.customerId,
    name: apiKey.name,
    prefix: apiKey.prefix,
    scope: apiKey.scope,
    created_at: apiKey.createdAt.toISOString(),
    expires_at: isoOrNull(apiKey.expiresAt),
  };
}

function isoOrNull(date: Date | null | undefined): string | null {
  return date ? date.toISOString() : null;
}

function isApiKeyScope(value: string): value is ApiKeyScope {
  return (API_KEY_SCOPE_CHOICES as readonly string[]).includes(value);
}

function isPlatform(value: string): value is Platform {
  return (PLATFORM_CHOICES as readonly string[]).includes(value);
}

function isUserRole(value: string): value is UserRole {
  return (USER_ROLES as readonly string[]).includes(value);
}

function requiredOption(args: CommandArgs, name: string): string {
  const value = args.values[name];
  if (value === undefined) throw new UsageError(`--${name} is required`);
  return value;
}

function integerOption(args: CommandArgs, name: string): number {
  return parseId(requiredOption(args, name), `--${name}`);
}

/**
 * A whole number, or undefined when the option is absent. Only the shape is checked here (a typo
 * is a usage error); the range is the service's rule, reported as a validation error.
 */
function wholeNumberOption(args: CommandArgs, name: string): number | undefined {
  const raw = args.values[name];
  if (raw === undefined) return undefined;
  const text = raw.trim();
  if (!/^-?\d{1,9}$/.test(text)) throw new UsageError(`--${name} must be a whole number (got "${raw}")`);
  return Number(text);
}

/** Ids are positive integers up to 2^53 - 1; anything else is a typo, not a lookup that finds nothing. */
export function parseId(raw: string, label: string): number {
  const text = raw.trim();
  if (!/^\d{1,16}$/.test(text) || Number(text) < 1 || Number(text) > MAX_ID) {
    throw new UsageError(`${label} must be a positive integer (got "${raw}")`);
  }
  return Number(text);
}

interface Invocation {
  name: string;
  command: Command;
  args: CommandArgs;
}

function findCommand(argv: string[]): { name: string; rest: string[] } | undefined {
  for (const words of [2, 1]) {
    const name = argv.slice(0, words).join(' ');
    if (argv.length >= words && Object.hasOwn(COMMANDS, name)) return { name, rest: argv.slice(words) };
  }
  return undefined;
}

function parseInvocation(argv: string[]): Invocation | 'help' {
  if (argv.length === 1 && ['--help', '-h', 'help'].includes(argv[0])) return 'help';
  const found = findCommand(argv);
  if (!found) {
    const given = argv.filter((word) => !word.startsWith('-')).slice(0, 2);
    const problem = given.length === 0 ? 'no command given' : `unknown command "${given.join(' ')}"`;
    throw new UsageError(`${problem}; commands: ${Object.keys(COMMANDS).join(', ')} (see --help)`);
  }
  const command = COMMANDS[found.name];
  const expected = command.positionals ?? [];
  let parsed;
  try {
    parsed = parseArgs({
      args: found.rest,
      options: Object.fromEntries(command.options.map((option) => [option, { type: 'string' as const }])),
      allowPositionals: expected.length > 0,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(oneLine((error as Error).message), found.name);
  }
  if (parsed.positionals.length !== expected.length) {
    throw new UsageError(`expected ${expected.length} argument(s) ${expected.join(' ')}`.trim(), found.name);
  }
  return {
    name: found.name,
    command,
    args: { values: parsed.values as Record<string, string | undefined>, positionals: parsed.positionals },
  };
}

function usageLine(name: string): string {
  return [PROGRAM, name, COMMANDS[name].usage].filter(Boolean).join(' ');
}

function helpText(): string {
  const lines = Object.keys(COMMANDS).map((name) => `  ${usageLine(name)}`);
  return `Usage:\n${lines.join('\n')}\n\nEach result is one JSON object on stdout; errors go to stderr with a non-zero exit code.\n`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * Runs one CLI invocation and returns its exit code: 0 on success, 2 for usage errors, 1 for
 * anything else. Writes exactly one JSON line to stdout on success and one line to stderr on
 * failure; `env` is read instead of process.env so tests can aim it at their own database.
 */
export async function runCli(argv: string[], io: CliIo, env: CliEnv = process.env): Promise<number> {
  let commandName: string | undefined;
  let database: PreparedDatabase | undefined;
  let app: INestApplicationContext | undefined;
  const fail = async (error: unknown): Promise<number> => {
    io.stderr.write(`${await describeError(error, commandName)}\n`);
    return error instanceof UsageError ? 2 : 1;
  };
  let exitCode: number;
  try {
    const invocation = parseInvocation(argv);
    if (invocation === 'help') {
      io.stdout.write(helpText());
      return 0;
    }
    commandName = invocation.name;
    // On a DATABASE_URL the server may be anywhere, with secrets of its own: a missing one is
    // never made up here (see LoadConfigOptions), only read from where the server keeps it.
    const config = loadConfig(env, { generateSecrets: !env.DATABASE_URL?.trim() });
    const context: CommandContext = {
      config,
      async app(...features) {
        if (database) throw new Error('A command opens one application context');
        const { prepareDatabase } = await import('../database/database.js');
        // stdout carries only the result; progress (e.g. first-time cluster setup) goes to stderr.
        database = await prepareDatabase(config, { log: (line) => io.stderr.write(`${oneLine(line)}\n`) });
        const { pino } = await import('pino');
        const { NestFactory } = await import('@nestjs/core');
        const { CliModule } = await import('./cli.module.js');
        const logger = pino({ level: 'warn' }, pino.destination(2));
        // Nest's own logger is off (its lines would land on stdout); a failure still reaches stderr as this run's error.
        app = await NestFactory.createApplicationContext(CliModule.forRoot({ config, url: database.url, logger, features }), {
          logger: false,
          abortOnError: false,
        });
        return app;
      },
    };
    const result = await invocation.command.run(invocation.args, context);
    io.stdout.write(`${JSON.stringify(result)}\n`);
    exitCode = 0;
  } catch (error) {
    exitCode = await fail(error);
  }
  try {
    try {
      await app?.close();
    } finally {
      await database?.close();
    }
  } catch (error) {
    // The result may already be out, but an unclean shutdown (say, an embedded cluster left running) must still show.
    exitCode = Math.max(exitCode, await fail(error));
  }
  return exitCode;
}

async function describeError(error: unknown, commandName: string | undefined): Promise<string> {
  if (error instanceof UsageError) {
    const name = error.commandName ?? commandName;
    const usage = name ? `; usage: ${usageLine(name)}` : '';
    return `${PROGRAM}: ${error.message}${usage}`;
  }
  if (error instanceof ConfigError) {
    return JSON.stringify({ error: 'invalid_configuration', detail: oneLine(error.message) });
  }
  // Loaded only now: if a command threw an ApiError, the module is already in memory anyway.
  const { ApiError } = await import('../common/errors/api-error.js');
  if (error instanceof ApiError) {
    return JSON.stringify({ error: error.code, detail: error.detail, errors: error.errors });
  }
  return JSON.stringify({ error: 'internal_error', detail: oneLine(error instanceof Error ? error.message : String(error)) });
}
