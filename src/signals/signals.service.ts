import { Injectable } from '@nestjs/common';
import { AiModelInstancesRepository } from '../ai-model-instances/ai-model-instances.repository.js';
import { AudiencesRepository } from '../audiences/audiences.repository.js';
import { ApiError, type FieldErrors } from '../common/errors/api-error.js';
import { constraintOf, isForeignKeyViolation } from '../common/errors/database-errors.js';
import { pageOf, type Page } from '../common/pagination/pagination.js';
import { MESSAGES } from '../common/validation/fields.js';
import { assignFields, changedFields, createdState, mergedState, type StateOf } from '../common/validation/field-table.js';
import { ConnectionsRepository } from '../connections/connections.repository.js';
import { type CreateSignalDto, SIGNAL_FIELDS, type SignalDto, type UpdateSignalDto } from './dto/signal.dto.js';
import { WebhookEvents } from '../webhooks/webhook-events.js';
import { toSignalDto } from './signal.mapper.js';
import { signalActivationError, signalCreationStatusError, signalTransitionError } from './signal-status.js';
import { type Signal, SignalStatus } from './signal.entity.js';
import { SignalsRepository } from './signals.repository.js';
import type { ListSignalsQuery } from './dto/list-signals.query.js';
import { Transactions, type Transaction } from '../common/tenancy/transactions.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { JOBS, signalDeliveryKey } from '../jobs/job-definitions.js';
import { Jobs } from '../jobs/jobs.service.js';
import { signalConfigErrors } from './signal-config.js';
import { isDeepStrictEqual } from 'node:util';

const ARCHIVED = 'This signal is archived and cannot be changed.';
const ACTIVE_NEEDS_CONNECTION = 'An active signal needs an active connection; pause the signal before removing or replacing it.';

type SignalState = StateOf<Signal, typeof SIGNAL_FIELDS>;

/** Composite foreign key → the API field and the state property it guards. */
const REFERENCE_CONSTRAINTS: Record<string, { field: string; property: 'modelInstanceId' | 'audienceId' | 'connectionId' }> = {
  signals_model_instance_fkey: { field: 'model_instance', property: 'modelInstanceId' },
  signals_audience_fkey: { field: 'audience', property: 'audienceId' },
  signals_connection_fkey: { field: 'connection', property: 'connectionId' },
};

/** The rules of SPEC section 3 for signals, shared by the REST controller and the MCP tools. */
@Injectable()
export class SignalsService {
  constructor(
    private readonly transactions: Transactions,
    private readonly signals: SignalsRepository,
    private readonly models: AiModelInstancesRepository,
    private readonly audiences: AudiencesRepository,
    private readonly connections: ConnectionsRepository,
    private readonly jobs: Jobs,
    private readonly tenants: TenantContext,
    private readonly webhooks: WebhookEvents,
  ) {}

  async list(query: ListSignalsQuery, url: URL): Promise<Page<SignalDto>> {
    const result = await this.signals.list(query, query.page);
    return pageOf(result, query.page, url, (signal) => toSignalDto(signal, signal.delivery));
  }

  async get(id: number): Promise<SignalDto> {
    const signal = await this.signals.getWithDelivery(id);
    return toSignalDto(signal, signal.delivery);
  }

  /**
   * The platform refused the signal's destination itself (unknown conversion action or pixel,
   * missing permission): an active signal turns `failed` with the reason (SPEC 10.4), and holds
   * its events until it is activated again. The one place this transition happens (the
   * `signal.failed` webhook of SPEC 10.5 belongs here). False when the signal was no longer active.
   */
  async failForDestination(signalId: number, reason: string, transaction: Transaction): Promise<boolean> {
    const failed = await this.signals.markFailed(signalId, reason, transaction);
    // Integrators hear of it (SPEC 10.5), in the same transaction as the change.
    if (failed) {
      // The signal as the API shows it, delivery counts included.
      const signal = await this.signals.getWithDelivery(signalId, transaction);
      await this.webhooks.emit(transaction, 'signal.failed', toSignalDto(signal, signal.delivery));
    }
    return failed;
  }

  /** Creating is the transition draft → `status`, with the same activation rule. */
  async create(input: CreateSignalDto): Promise<SignalDto> {
    const state = createdState<Signal, typeof SIGNAL_FIELDS>(SIGNAL_FIELDS, input);
    const statusError = signalCreationStatusError(state.status);
    if (statusError) throw ApiError.field('status', statusError);
    return this.transactions.run(async (transaction) => {
      await this.validate(state, undefined, transaction);
      return toSignalDto(await this.persist(state, () => this.signals.insert({ ...state }, transaction)));
    });
  }

  /**
   * PATCH: the merged state is validated as a whole. An archived signal is read-only: a change is
   * a 400, a PATCH that changes nothing is a 200 (SPEC section 3).
   */
  async update(id: number, input: UpdateSignalDto): Promise<SignalDto> {
    return this.transactions.run(async (transaction) => {
      const signal = await this.signals.getById(id, { transaction, lock: true });
      const next = mergedState<Signal, typeof SIGNAL_FIELDS>(SIGNAL_FIELDS, signal, input);
      if (changedFields<Signal, typeof SIGNAL_FIELDS>(SIGNAL_FIELDS, signal, next).length === 0)
        return toSignalDto(signal, await this.signals.deliveryOf(id, transaction));
      if (signal.status === SignalStatus.archived) throw ApiError.field('status', ARCHIVED);
      const transitionError = signalTransitionError(signal.status, next.status);
      if (transitionError) throw ApiError.field('status', transitionError);
      await this.validate(next, signal, transaction);
      const resumed =
        next.status === SignalStatus.active && (signal.status === SignalStatus.paused || signal.status === SignalStatus.failed);
      assignFields<Signal, typeof SIGNAL_FIELDS>(SIGNAL_FIELDS, signal, next);
      if (signal.status !== SignalStatus.failed) signal.statusReason = null;
      const saved = await this.persist(next, () => this.signals.save(signal, transaction));
      // Events held while it was paused or failed go out now (SPEC 10.4), with the change that resumed it.
      if (resumed) {
        const customerId = this.tenants.current().customerId;
        await this.jobs.enqueue(
          transaction,
          JOBS.signalDelivery,
          { customerId, signalId: id },
          { key: signalDeliveryKey(customerId, id), runAt: new Date() },
        );
      }
      return toSignalDto(saved, await this.signals.deliveryOf(id, transaction));
    });
  }

  /** Archived signals may be deleted too: archiving freezes a signal's settings, it does not keep it forever. */
  async delete(id: number): Promise<void> {
    await this.transactions.run(async (transaction) => {
      if (!(await this.signals.delete(id, transaction))) throw ApiError.notFound();
    });
  }

  /**
   * References and the activation rule, all reported together. A PATCH (`previous` set) looks up
   * only the references it changes, and the connection when the activation rule needs it: the
   * others were checked when they were written, and a deleted one is held by its foreign key.
   * Every lookup is narrowed to the tenant, so another workspace's id reads exactly like a
   * missing one.
   */
  private async validate(state: SignalState, previous: Signal | undefined, transaction: Transaction): Promise<void> {
    const errors: FieldErrors = {};
    if (
      state.modelInstanceId !== null &&
      state.modelInstanceId !== previous?.modelInstanceId &&
      !(await existsIn(this.models, state.modelInstanceId, transaction))
    )
      errors.model_instance = [MESSAGES.doesNotExist(state.modelInstanceId)];
    if (
      state.audienceId !== null &&
      state.audienceId !== previous?.audienceId &&
      !(await existsIn(this.audiences, state.audienceId, transaction))
    )
      errors.audience = [MESSAGES.doesNotExist(state.audienceId)];
    const configChanged = previous === undefined || !isDeepStrictEqual(state.config, previous.config);
    const connectionChanged = state.connectionId !== previous?.connectionId;
    const activating = state.status === SignalStatus.active && previous?.status !== SignalStatus.active;
    // What this write changes is checked: an active signal's description or name alone reads no connection.
    const needsConnection = connectionChanged || activating || configChanged;
    const connection =
      state.connectionId === null || !needsConnection ? null : await this.connections.findById(state.connectionId, { transaction });
    if (state.connectionId !== null && needsConnection && connection === null)
      errors.connection = [MESSAGES.doesNotExist(state.connectionId)];

    // SPEC 10.4: the settings of the connection's platform, complete once the signal is to be active:
    // checked when they, the connection or the activation change (an active signal whose settings
    // predate this rule takes a new description, and must be completed with its next settings).
    if (connection !== null && (configChanged || connectionChanged || activating))
      Object.assign(errors, signalConfigErrors(connection.platform, state.config, state.status === SignalStatus.active));

    if (state.status === SignalStatus.active) {
      const activationError = signalActivationError(connection);
      if (previous?.status !== SignalStatus.active) {
        if (activationError) errors.status = [activationError];
      } else if (previous.connectionId !== state.connectionId && activationError && !errors.connection) {
        // Already active: swapping the destination must not leave it sending nowhere (the same
        // invariant that pauses active signals when their connection is deleted).
        errors.connection = [ACTIVE_NEEDS_CONNECTION];
      }
    }
    if (Object.keys(errors).length > 0) throw ApiError.validation(errors);
  }

  /**
   * A referenced object deleted between the check and the write hits a composite foreign key:
   * answer with the same 400 the check gives, never a 500. Throwing rolls the transaction back.
   */
  private async persist(state: SignalState, work: () => Promise<Signal>): Promise<Signal> {
    try {
      return await work();
    } catch (error) {
      const reference = isForeignKeyViolation(error) ? REFERENCE_CONSTRAINTS[constraintOf(error) ?? ''] : undefined;
      if (reference) throw ApiError.field(reference.field, MESSAGES.doesNotExist(state[reference.property]));
      throw error;
    }
  }
}

type ReferenceRepository = { existingIds(ids: number[], transaction?: Transaction): Promise<Set<number>> };

async function existsIn(repository: ReferenceRepository, id: number, transaction: Transaction): Promise<boolean> {
  return (await repository.existingIds([id], transaction)).has(id);
}
