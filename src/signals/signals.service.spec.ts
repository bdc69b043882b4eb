import type { AiModelInstancesRepository } from '../ai-model-instances/ai-model-instances.repository.js';
import type { AudiencesRepository } from '../audiences/audiences.repository.js';
import { ApiError } from '../common/errors/api-error.js';
import type { ConnectionsRepository } from '../connections/connections.repository.js';
import type { Transaction, Transactions } from '../common/tenancy/transactions.js';
import type { SignalsRepository } from './signals.repository.js';
import { SignalsService } from './signals.service.js';
import type { WebhookEvents } from '../webhooks/webhook-events.js';
import type { Jobs } from '../jobs/jobs.service.js';
import type { TenantContext } from '../common/tenancy/tenant-context.js';

/**
 * A referenced object deleted between the service's check and its INSERT cannot be staged through
 * HTTP reliably, so the race is simulated here: every check passes and the write then hits the
 * composite foreign key, as it would in PostgreSQL.
 */
describe('SignalsService foreign key races', () => {
  const transaction = {} as Transaction;
  const transactions = { run: (work: (transaction: Transaction) => Promise<unknown>) => work(transaction) } as unknown as Transactions;
  const everyId = { existingIds: async (ids: number[]) => new Set(ids) };
  const connections = { findById: async () => ({ status: 'active', platform: 'google_ads' }) } as unknown as ConnectionsRepository;

  function serviceFailingWith(error: unknown): SignalsService {
    const signals = {
      insert: async () => {
        throw error;
      },
    } as unknown as SignalsRepository;
    return new SignalsService(
      transactions,
      signals,
      everyId as unknown as AiModelInstancesRepository,
      everyId as unknown as AudiencesRepository,
      connections,
      {} as unknown as Jobs,
      {} as unknown as TenantContext,
      {} as unknown as WebhookEvents,
    );
  }

  const input = {
    name: 'Race',
    signal_type: 'score' as const,
    model_instance: 11,
    audience: 12,
    connection: 13,
    status: 1 as const,
    config: { conversion_action_id: '42' },
  };

  it.each([
    ['signals_model_instance_fkey', 'model_instance', 11],
    ['signals_audience_fkey', 'audience', 12],
    ['signals_connection_fkey', 'connection', 13],
  ])('answers a violation of %s like a missing %s', async (constraint, field, id) => {
    const violation = Object.assign(new Error('violates foreign key constraint'), { driverError: { code: '23503', constraint } });
    const error = await serviceFailingWith(violation)
      .create(input)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).statusCode).toBe(400);
    expect((error as ApiError).errors).toEqual({ [field]: [`Invalid pk "${id}" - object does not exist.`] });
  });

  it('lets any other database error through', async () => {
    const other = Object.assign(new Error('deadlock detected'), { driverError: { code: '40P01' } });
    await expect(serviceFailingWith(other).create(input)).rejects.toBe(other);
  });
});
