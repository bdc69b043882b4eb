import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { AiModelInstancesRepository } from '../ai-model-instances/ai-model-instances.repository.js';
import { AudiencesRepository } from '../audiences/audiences.repository.js';
import { rulesErrors, type RuleNode } from '../audiences/rules/audience-rules.js';
import { compileRules } from '../audiences/rules/rules-sql.js';
import { ApiError } from '../common/errors/api-error.js';
import { type Page } from '../common/pagination/pagination.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { type Transaction, Transactions } from '../common/tenancy/transactions.js';
import { JOBS } from '../jobs/job-definitions.js';
import { JobHandler } from '../jobs/job-handler.decorator.js';
import { Jobs } from '../jobs/jobs.service.js';
import { LOGGER } from '../logging/logger.token.js';
import type { ListPeopleQuery } from '../people/dto/list-people.query.js';
import type { PersonDto } from '../people/dto/person.dto.js';
import { PeopleService } from '../people/people.service.js';
import type { ChangeMembersDto, MembersChangedDto } from './dto/members.dto.js';
import { MembershipMaintenanceRepository } from './membership-maintenance.repository.js';
import { membershipTenant } from './membership-tenant.js';
import { MembershipsRepository, type RecomputeOutcome } from './memberships.repository.js';

/**
 * Audience members (SPEC 10.2): the recompute of rules and model audiences, uploads' add and
 * remove, and the jobs that keep members in step with their inputs.
 */
@Injectable()
export class MembershipsService {
  constructor(
    private readonly transactions: Transactions,
    private readonly memberships: MembershipsRepository,
    private readonly maintenance: MembershipMaintenanceRepository,
    private readonly audiences: AudiencesRepository,
    private readonly models: AiModelInstancesRepository,
    private readonly people: PeopleService,
    private readonly jobs: Jobs,
    private readonly tenants: TenantContext,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** `GET /api/v1/audiences/{id}/members/`: the members as people (404 for an audience not of this workspace). */
  async list(audienceId: number, query: ListPeopleQuery, url: URL): Promise<Page<PersonDto>> {
    await this.audiences.getById(audienceId);
    return this.people.list({ ...query, audience: audienceId } as ListPeopleQuery, url);
  }

  /**
   * Adds or removes people of an upload audience in one transaction (SPEC 10.2): added rows are
   * upserted as people first; the audience's size is counted again before the answer. Another
   * source type is a 409, an archived audience too (its members are frozen).
   */
  async change(audienceId: number, body: ChangeMembersDto): Promise<MembersChangedDto> {
    return this.transactions.run(async (transaction) => {
      const audience = await this.audiences.getById(audienceId, { transaction, lock: true });
      if (audience.sourceType !== 'upload')
        throw ApiError.conflict(`Members are computed for a ${audience.sourceType} audience; only upload audiences take them.`);
      if (audience.status === 'archived') throw ApiError.conflict('This audience is archived: its members are frozen.');
      let added = 0;
      let removed = 0;
      let rejected: MembersChangedDto['rejected'];
      if (body.action === 'add') {
        const written = await this.people.upsertRows(body.people, transaction);
        added = await this.memberships.add(
          audienceId,
          written.people.map((row) => row.personId),
          transaction,
        );
        rejected = written.rejected;
        if (written.people.length > 0) await this.people.membershipInputsChanged(transaction);
      } else {
        const named = this.people.namedForRemoval(body.people);
        removed = await this.memberships.removeNamed(audienceId, named, transaction);
        rejected = named.rejected;
      }
      if (added + removed > 0) {
        await this.memberships.setComputed(audienceId, await this.memberships.count(audienceId, transaction), transaction);
        if (audience.status === 'active') await this.syncLater(audienceId, transaction);
      }
      return { added, removed, rejected };
    });
  }

  @JobHandler(JOBS.membershipRecompute)
  async recomputeJob(payload: { customerId: number; audienceId: number }): Promise<void> {
    await this.tenants.run(membershipTenant(payload.customerId), () => this.recompute(payload.audienceId));
  }

  @JobHandler(JOBS.membershipWorkspaceChanged)
  async workspaceChangedJob(payload: { customerId: number }): Promise<void> {
    await this.tenants.run(membershipTenant(payload.customerId), () => this.recomputeLater({}));
  }

  @JobHandler(JOBS.membershipModelChanged)
  async modelChangedJob(payload: { customerId: number; modelInstanceId: number }): Promise<void> {
    await this.tenants.run(membershipTenant(payload.customerId), () => this.recomputeLater({ modelInstanceId: payload.modelInstanceId }));
  }

  /** The periodic refresh: every active rules and model audience of every workspace gets a recompute. */
  @JobHandler(JOBS.membershipRefresh)
  async refreshJob(): Promise<void> {
    await this.transactions.run(async (transaction) => {
      for (const { customerId, audienceId } of await this.maintenance.activeComputedAudiences(transaction)) {
        await this.jobs.enqueue(
          transaction,
          JOBS.membershipRecompute,
          { customerId, audienceId },
          { key: `${customerId}:${audienceId}`, runAt: new Date() },
        );
      }
    });
  }

  /**
   * Makes one audience's members what its source says, in one transaction, and records the size:
   * - rules: the people its tree selects (a tree outside the grammar, from before it, is left as it is);
   * - model: the people whose score from the model's current version reaches `min_score`, while
   *   the model is `ready` (otherwise the members stay as they were);
   * - upload: the members as uploaded, counted.
   * An archived audience is frozen. Safe to run twice: the second run finds nothing to change.
   */
  async recompute(audienceId: number): Promise<RecomputeOutcome | undefined> {
    const started = Date.now();
    const outcome = await this.transactions.run(async (transaction) => {
      const audience = await this.memberships.heldForRecompute(audienceId, transaction);
      if (audience === undefined || audience.status === 'archived') return undefined;
      let result: RecomputeOutcome | undefined;
      if (audience.sourceType === 'rules') {
        if (Object.keys(rulesErrors(audience.rules)).length > 0) return undefined;
        const compiled = compileRules(audience.rules as RuleNode, 3);
        result = await this.memberships.recompute(
          audienceId,
          MembershipsRepository.rulesWanted(compiled.sql, compiled.parameters),
          transaction,
        );
      } else if (audience.sourceType === 'model') {
        const model = audience.modelInstanceId === null ? null : await this.models.findById(audience.modelInstanceId, { transaction });
        if (model === null || model.status !== 'ready') return undefined;
        result = await this.memberships.recompute(
          audienceId,
          MembershipsRepository.modelWanted(model.id, model.version, audience.minScore),
          transaction,
        );
      } else {
        // Locked, as an upload locks it: a count read before an upload commits must not overwrite its size.
        await this.audiences.getById(audienceId, { transaction, lock: true });
        result = { size: await this.memberships.count(audienceId, transaction), added: 0, removed: 0 };
      }
      await this.memberships.setComputed(audienceId, result.size, transaction);
      // Its destinations follow (SPEC 10.3): the sync trigger, debounced, sends only a difference, if any.
      if (audience.status === 'active') await this.syncLater(audienceId, transaction);
      return result;
    });
    if (outcome !== undefined)
      this.logger.info({ audience: audienceId, ...outcome, durationMs: Date.now() - started }, 'audience members recomputed');
    return outcome;
  }

  /** The audience's destinations get a sync after its members changed (SPEC 10.3), debounced per audience. */
  private async syncLater(audienceId: number, transaction: Transaction): Promise<void> {
    const customerId = this.tenants.current().customerId;
    await this.jobs.enqueue(transaction, JOBS.syncMembershipChanged, { customerId, audienceId }, { key: `${customerId}:${audienceId}` });
  }

  /** Enqueues a recompute of each audience the change touches (each debounced on its own key). */
  private async recomputeLater(filter: { modelInstanceId?: number }): Promise<void> {
    const customerId = this.tenants.current().customerId;
    await this.transactions.run(async (transaction: Transaction) => {
      for (const audienceId of await this.memberships.audienceIdsToRecompute(filter, transaction)) {
        await this.jobs.enqueue(
          transaction,
          JOBS.membershipRecompute,
          { customerId, audienceId },
          { key: `${customerId}:${audienceId}`, runAt: new Date() },
        );
      }
    });
  }
}
