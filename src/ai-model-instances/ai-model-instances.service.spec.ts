import { ApiError } from '../common/errors/api-error.js';
import type { TenantContext } from '../common/tenancy/tenant-context.js';
import type { Transactions } from '../common/tenancy/transactions.js';
import type { Jobs } from '../jobs/jobs.service.js';
import type { AiModelInstancesRepository } from './ai-model-instances.repository.js';
import { AiModelInstancesService } from './ai-model-instances.service.js';

/** A transaction that fails the way PostgreSQL does when a reference was added after the usage check. */
function failingWith(error: unknown): AiModelInstancesService {
  const transactions = { run: () => Promise.reject(error) } as unknown as Transactions;
  return new AiModelInstancesService(transactions, {} as AiModelInstancesRepository, {} as Jobs, {} as TenantContext);
}

const foreignKey = (constraint: string) => Object.assign(new Error('violates foreign key constraint'), { code: '23503', constraint });

describe('AiModelInstancesService.delete race backstop', () => {
  it.each(['audiences_model_instance_fkey', 'signals_model_instance_fkey'])(
    'turns a %s violation into 409 conflict',
    async (constraint) => {
      const error = await failingWith({ driverError: foreignKey(constraint) })
        .delete(7)
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ statusCode: 409, code: 'conflict' });
    },
  );

  it('lets any other database error through', async () => {
    const other = foreignKey('signals_connection_fkey');
    await expect(failingWith(other).delete(7)).rejects.toBe(other);
  });
});
