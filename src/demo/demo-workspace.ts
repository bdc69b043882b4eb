import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type DataSource } from 'typeorm';
import { Customer } from '../customers/customer.entity.js';
import { CustomersRepository } from '../customers/customers.repository.js';
import { CustomersService } from '../customers/customers.service.js';
import { Transactions } from '../common/tenancy/transactions.js';
import { PasswordHasher } from '../users/password-hasher.js';
import { User } from '../users/user.entity.js';
import { UsersRepository } from '../users/users.repository.js';
import { UsersService } from '../users/users.service.js';

export interface DemoCredentials {
  customer: number;
  email: string;
  password: string;
  /** True on the start that created the workspace (and so should fill it with sample data). */
  created?: boolean;
}

const DEMO_EMAIL = 'admin@demo.example';

/**
 * On the very first start (no workspace at all) creates a demo workspace with an admin user and
 * a random password, kept in the data directory (mode 0600) so later starts can print it again.
 * Returns undefined when the database already had workspaces of its own. Runs at startup outside
 * the Nest container, like the CLI, so it builds its repositories from the DataSource itself.
 */
export async function ensureDemoWorkspace(dataSource: DataSource, dataDir: string): Promise<DemoCredentials | undefined> {
  const file = join(dataDir, 'demo-credentials.json');
  const saved = await readFile(file, 'utf8').then(
    (text) => JSON.parse(text) as DemoCredentials,
    () => undefined,
  );
  if (saved) return saved;
  const customers = new CustomersRepository(dataSource.getRepository(Customer));
  if (await customers.any()) return undefined;

  const customer = await new CustomersService(customers).create('Demo workspace');
  const password = randomBytes(12).toString('base64url');
  const users = new UsersService(
    new UsersRepository(dataSource.getRepository(User)),
    customers,
    new Transactions(dataSource),
    new PasswordHasher(),
  );
  await users.create({ customerId: customer.id, email: DEMO_EMAIL, password, role: 'admin' });
  const credentials = { customer: customer.id, email: DEMO_EMAIL, password };
  await mkdir(dataDir, { recursive: true });
  await writeFile(file, JSON.stringify(credentials, null, 2), { mode: 0o600 });
  return { ...credentials, created: true };
}
