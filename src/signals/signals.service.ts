import { isDeepStrictEqual } from 'node:util';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AiModelInstancesRepository } from '../ai-model-instances/ai-model-instances.repository.js';
import { AudiencesRepository } from '../audiences/audiences.repository.js';
import { ApiError, type FieldErrors } from '../common/errors/api-error.js';
import { constraintOf, isForeignKeyViolation } from '../common/errors/database-errors.js';
import { pageOf, type Page, type PageRequest } from '../common/pagination/pagination.js';
import { MESSAGES } from '../common/validation/fields.js';
import { ConnectionsRepository } from '../connections/connections.repository.js';
import type { CreateSignalDto, SignalDto, UpdateSignalDto } from './dto/signal.dto.js';
import { toSignalDto } from './signal.mapper.js';
import { signalActivationError, signalCreationStatusError, signalTransitionError } from './signal-status.js';
import { type Signal, SignalStatus } from './signal.entity.js';
import { type SignalFilters, SignalsRepository } from './signals.repository.js';
import { Transactions } from '../database/transactions.js';

const ARCHIVED = 'This signal is archived and cannot be changed.';
const ACTIVE_NEEDS_CONNECTION = 'An active signal needs an active connection; pause the signal before removing or replacing it.';

type SignalState = Pick<
  Signal,
  'name' | 'description' | 'signalType' | 'status' | 'modelInstanceId' | 'audienceId' | 'connectionId' | 'config'
>;

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
  ) {}

  async list(filters: SignalFilters, request: PageRequest, url: URL): Promise<Page<SignalDto>> {
    return pageOf(await this.signals.list(filters, request), request, url, toSignalDto);
  }

  async get(id: number): Promise<SignalDto> {
    return toSignalDto(await this.signals.getById(id));
  }

  /** Creating is the transition draft → `status`, with the same activation rule. */
  async create(input: CreateSignalDto): Promise<SignalDto> {
    const state: SignalState = {
      name: input.name,
      description: input.description ?? '',
      signalType: input.signal_type,
      status: input.status ?? SignalStatus.draft,
      modelInstanceId: input.model_instance ?? null,
      audienceId: input.audience ?? null,
      connectionId: input.connection ?? null,
      config: input.config ?? {},
    };
    const statusError = signalCreationStatusError(state.status);
    if (statusError) throw ApiError.field('status', statusError);
    return this.transactions.run(async (manager) => {
      await this.validate(state, undefined, manager);
      return toSignalDto(await this.persist(state, () => this.signals.insert({ ...state }, manager)));
    });
  }

  /**
   * PATCH: the merged state is validated as a whole. An archived signal is read-only: a change is
   * a 400, a PATCH that changes nothing is a 200 (SPEC section 3).
   */
  async update(id: number, input: UpdateSignalDto): Promise<SignalDto> {
    return this.transactions.run(async (manager) => {
      const signal = await this.signals.getById(id, { manager, lock: true });
      const next: SignalState = {
        name: input.name ?? signal.name,
        description: input.description ?? signal.description,
        signalType: input.signal_type ?? signal.signalType,
        status: input.status ?? signal.status,
        modelInstanceId: input.model_instance !== undefined ? input.model_instance : signal.modelInstanceId,
        audienceId: input.audience !== undefined ? input.audience : signal.audienceId,
        connectionId: input.connection !== undefined ? input.connection : signal.connectionId,
        config: input.config ?? signal.config,
      };
      if (!changed(signal, next)) return toSignalDto(signal);
      if (signal.status === SignalStatus.archived) throw ApiError.field('status', ARCHIVED);
      const transitionError = signalTransitionError(signal.status, next.status);
      if (transitionError) throw ApiError.field('status', transitionError);
      await this.validate(next, signal, manager);
      Object.assign(signal, next);
      return toSignalDto(await this.persist(next, () => this.signals.save(signal, manager)));
    });
  }

  /** Archived signals may be deleted too: archiving freezes a signal's settings, it does not keep it forever. */
  async delete(id: number): Promise<void> {
    await this.transactions.run(async (manager) => {
      if (!(await this.signals.delete(id, manager))) throw ApiError.notFound();
    });
  }

  /**
   * References and the activation rule, all reported together. Every lookup is narrowed to the
   * tenant, so another workspace's id reads exactly like a missing one.
   */
  private async validate(state: SignalState, previous: Signal | undefined, manager: EntityManager): Promise<void> {
    const errors: FieldErrors = {};
    if (state.modelInstanceId !== null && !(await existsIn(this.models, state.modelInstanceId, manager)))
      errors.model_instance = [MESSAGES.doesNotExist(state.modelInstanceId)];
    if (state.audienceId !== null && !(await existsIn(this.audiences, state.audienceId, manager)))
      errors.audience = [MESSAGES.doesNotExist(state.audienceId)];
    const connection = state.connectionId === null ? null : await this.connections.findById(state.connectionId, { manager });
    if (state.connectionId !== null && connection === null) errors.connection = [MESSAGES.doesNotExist(state.connectionId)];

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

type ReferenceRepository = { existingIds(ids: number[], manager?: EntityManager): Promise<Set<number>> };

async function existsIn(repository: ReferenceRepository, id: number, manager: EntityManager): Promise<boolean> {
  return (await repository.existingIds([id], manager)).has(id);
}

function changed(signal: Signal, next: SignalState): boolean {
  return (
    signal.name !== next.name ||
    signal.description !== next.description ||
    signal.signalType !== next.signalType ||
    signal.status !== next.status ||
    signal.modelInstanceId !== next.modelInstanceId ||
    signal.audienceId !== next.audienceId ||
    signal.connectionId !== next.connectionId ||
    // jsonb does not keep key order, so compare by value.
    !isDeepStrictEqual(signal.config, next.config)
  );
}
