import { randomInt } from 'node:crypto';
import type { Connection } from '../connections/connection.entity.js';
import { type DestinationOutcome, type RejectedMember, slices } from '../destinations/destination-types.js';
import { type GoogleMemberBatch, type GoogleMemberInput, prepareGoogleMembers } from '../destinations/google-audience-members.js';
import type { GoogleDataManagerClient } from '../destinations/google-data-manager.client.js';
import { META_SCHEMA_KEYS, type MetaRowBatch, type MetaSchemaKey, planMetaUpload } from '../destinations/meta-audience-rows.js';
import type { MetaBatchReceipt, MetaCustomAudiencesClient } from '../destinations/meta-custom-audiences.client.js';
import type { Metrics } from '../metrics/metrics.js';
import { consentOf, googleInput, metaInput, vanishedIdentifiers } from './member-payloads.js';
import type { DiffPlan, DiffScope, MemberState, MemberToSend, SyncMembersRepository } from './sync-members.repository.js';
import type { PendingGoogleRequest, SyncRun } from './sync-run.entity.js';
import { DIFF_PAGE, type RunStopped } from './sync-outcome.js';

/** The keys every Meta session of a sync uses: fixed, because a session keeps the schema of its first batch and the diff is read a page at a time. */
const META_SYNC_SCHEMA: readonly MetaSchemaKey[] = META_SCHEMA_KEYS.filter((key) => key !== 'EXTERN_ID');

/** What the run gives the sender: its destination, token, clients, and the run's request wrapper (rate budget, retries). */
export interface SendContext {
  run: SyncRun;
  scope: DiffScope;
  connection: Connection;
  accessToken: string;
  google: GoogleDataManagerClient;
  meta: MetaCustomAudiencesClient;
  call: <T>(request: () => Promise<DestinationOutcome<T>>) => Promise<DestinationOutcome<T>>;
  progress: (change: {
    added?: number;
    removed?: number;
    failed?: Record<string, number>;
    unmatchable?: number;
    pending?: PendingGoogleRequest;
  }) => Promise<void>;
  stopFor: (failure: Extract<DestinationOutcome<never>, { ok: false }>['failure']) => RunStopped;
}

/** Refusals that concern one batch, not the destination: the batch's people count as failed and the run goes on. */
const BATCH_REFUSALS = new Set(['invalid_request', 'too_large', 'audience_too_small', 'other']);

/**
 * Sends one destination's difference (SPEC 10.3): the members to add, then the people to remove,
 * a page of the diff at a time, each page cut into the platform's requests; every accepted request
 * is recorded before the next is sent. Rejections before sending (a malformed hash, a row too
 * large) count as failed by reason; `unmatchable` ones as skipped.
 */
export class DestinationSender {
  constructor(
    private readonly context: SendContext,
    private readonly members: SyncMembersRepository,
    private readonly metrics: Metrics,
  ) {}

  /** Sends the plan's members, then its removals, a page of ids at a time. */
  async sendAll(platformAudienceId: string, plan: Pick<DiffPlan, 'addIds' | 'removeIds'>): Promise<void> {
    const adds = slices(plan.addIds, DIFF_PAGE);
    const removes = slices(plan.removeIds, DIFF_PAGE);
    if (this.context.scope.platform === 'google') {
      await this.googleAdds(platformAudienceId, adds);
      await this.googleRemoves(platformAudienceId, removes);
    } else {
      await this.metaAdds(platformAudienceId, adds, plan.addIds.length);
      await this.metaRemoves(platformAudienceId, removes, plan.removeIds.length);
    }
  }

  private async googleAdds(userListId: string, pages: number[][]): Promise<void> {
    const { scope } = this.context;
    for (const ids of pages) {
      const page = await this.members.toSend(scope, ids);
      if (page.length === 0) continue;
      // Identifiers a person no longer has leave the list; the person stays with the rest.
      const dropped: GoogleMemberInput<number>[] = [];
      for (const member of page) {
        if (member.sentIdentifiers === null) continue;
        const gone = vanishedIdentifiers(member.sentIdentifiers, member.identifiers);
        if (gone.email.length + gone.phone.length > 0)
          dropped.push({ key: member.personId, emails: gone.email, phones: gone.phone, address: null, consent: consentOf(member.consent) });
      }
      if (dropped.length > 0) {
        for (const batch of prepareGoogleMembers(dropped, 'remove').batches) await this.googleRequest(userListId, 'remove', batch);
      }
      const prepared = prepareGoogleMembers(
        page.map((member) => googleInput(member)),
        'ingest',
      );
      await this.rejected(prepared.rejected);
      const byId = new Map(page.map((member) => [member.personId, member]));
      for (const batch of prepared.batches) {
        const requestId = await this.googleRequest(userListId, 'ingest', batch);
        if (requestId === undefined) continue;
        await this.members.recordSent(
          scope,
          batch.keys.map((key) => byId.get(key)!),
          requestId,
        );
        this.metrics.syncMembersSent.inc({ platform: 'google', operation: 'add' }, batch.keys.length);
        await this.context.progress({ added: batch.keys.length, pending: { requestId, operation: 'ingest', members: batch.keys.length } });
      }
    }
  }

  private async googleRemoves(userListId: string, pages: number[][]): Promise<void> {
    const { scope } = this.context;
    for (const ids of pages) {
      const page = await this.members.toRemove(scope, ids);
      if (page.length === 0) continue;
      const prepared = prepareGoogleMembers(
        page.map((member) => googleInput(member)),
        'remove',
      );
      // A sent person always had a key; a rejection here is a malformed stored hash: forget it, it cannot be removed.
      await this.rejected(prepared.rejected);
      await this.members.recordRemoved(
        scope,
        prepared.rejected.map((rejection) => rejection.key),
      );
      for (const batch of prepared.batches) {
        const requestId = await this.googleRequest(userListId, 'remove', batch);
        if (requestId === undefined) continue;
        // The rows go with Google's verdict on the request (SyncRunner.pollGoogle), not before.
        await this.members.recordRemovalPending(scope, batch.keys, requestId);
        this.metrics.syncMembersSent.inc({ platform: 'google', operation: 'remove' }, batch.keys.length);
        await this.context.progress({
          removed: batch.keys.length,
          pending: { requestId, operation: 'remove', members: batch.keys.length },
        });
      }
    }
  }

  /** One Google request; its request id, or undefined when Google refused the batch (counted failed). */
  private async googleRequest(
    userListId: string,
    operation: 'ingest' | 'remove',
    batch: GoogleMemberBatch<number>,
  ): Promise<string | undefined> {
    const { connection, accessToken, google } = this.context;
    const target = {
      operatingAccountId: connection.externalAccountId,
      userListId,
      customerMatchTermsAccepted: connection.customerMatchTermsAccepted,
    };
    const outcome = await this.context.call(() =>
      operation === 'ingest' ? google.ingestMembers(accessToken, target, batch) : google.removeMembers(accessToken, target, batch),
    );
    if (outcome.ok) return outcome.value.requestId;
    return this.refusedBatch(outcome.failure, batch.keys.length);
  }

  private async metaAdds(audienceId: string, pages: number[][], plannedAdd: number): Promise<void> {
    const { scope } = this.context;
    const session = new MetaSession(audienceId, 'add', plannedAdd);
    for (const [index, ids] of pages.entries()) {
      const page = await this.members.toSend(scope, ids);
      const byId = new Map(page.map((member) => [member.personId, member]));
      await this.metaPage(
        session,
        page.map((member) => metaInput(member)),
        index === pages.length - 1,
        async (keys) => {
          await this.members.recordSent(
            scope,
            keys.map((key) => byId.get(key)!),
            null,
          );
          this.metrics.syncMembersSent.inc({ platform: 'meta', operation: 'add' }, keys.length);
          await this.context.progress({ added: keys.length });
        },
      );
      // Identifiers a person no longer has: one DELETE session of their rows, at the end.
      for (const member of page) this.collectVanished(member);
    }
    await this.sendVanished(audienceId);
  }

  private readonly vanished: MemberState[] = [];

  private collectVanished(member: MemberToSend): void {
    if (member.sentIdentifiers === null) return;
    const gone = vanishedIdentifiers(member.sentIdentifiers, member.identifiers);
    if (gone.email.length + gone.phone.length === 0) return;
    const packed = Buffer.concat([
      ...gone.email.map((hash) => Buffer.concat([Buffer.of(1), hash])),
      ...gone.phone.map((hash) => Buffer.concat([Buffer.of(2), hash])),
    ]);
    this.vanished.push({
      personId: member.personId,
      identifiers: packed,
      regionCode: null,
      postalCode: null,
      mobileAdId: null,
      consent: member.consent,
    });
  }

  private async sendVanished(audienceId: string): Promise<void> {
    if (this.vanished.length === 0) return;
    const session = new MetaSession(audienceId, 'remove', this.vanished.length);
    // Nothing to record: the people stay, with the identifiers recorded when they were sent.
    await this.metaPage(
      session,
      this.vanished.map((member) => metaInput(member)),
      true,
      async () => undefined,
    );
  }

  private async metaRemoves(audienceId: string, pages: number[][], plannedRemove: number): Promise<void> {
    const { scope } = this.context;
    const session = new MetaSession(audienceId, 'remove', plannedRemove);
    for (const [index, ids] of pages.entries()) {
      const page = await this.members.toRemove(scope, ids);
      await this.metaPage(
        session,
        page.map((member) => metaInput(member)),
        index === pages.length - 1,
        async (keys) => {
          await this.members.recordRemoved(scope, keys);
          this.metrics.syncMembersSent.inc({ platform: 'meta', operation: 'remove' }, keys.length);
          await this.context.progress({ removed: keys.length });
        },
      );
    }
  }

  /** One page of people as Meta rows, in requests of the session; `accepted` records each accepted request's people. */
  private async metaPage(
    session: MetaSession,
    inputs: ReturnType<typeof metaInput>[],
    lastPage: boolean,
    accepted: (keys: number[]) => Promise<void>,
  ): Promise<void> {
    const plan = planMetaUpload(inputs, this.context.meta.maxRequestBytes, META_SYNC_SCHEMA);
    await this.rejected(plan.rejected);
    for (const [index, batch] of plan.batches.entries()) {
      const receipt = await this.metaRequest(session, plan.schema, batch, lastPage && index === plan.batches.length - 1);
      if (receipt !== undefined) await accepted(receipt.keys);
    }
  }

  private async metaRequest(
    session: MetaSession,
    schema: readonly string[],
    batch: MetaRowBatch<number>,
    last: boolean,
  ): Promise<MetaBatchReceipt<number> | undefined> {
    const { accessToken, meta } = this.context;
    const seq = session.nextSeq();
    const outcome = await this.context.call(() =>
      meta.sendBatch(accessToken, {
        audienceId: session.audienceId,
        operation: session.operation,
        schema,
        batch,
        session: {
          session_id: session.id,
          batch_seq: seq,
          last_batch_flag: last,
          estimated_num_total: Math.max(session.estimatedTotal, 1),
        },
      }),
    );
    if (outcome.ok) return outcome.value;
    await this.refusedBatch(outcome.failure, batch.keys.length);
    return undefined;
  }

  /** A refused batch: its people count as failed when the refusal is the batch's; otherwise the run stops. */
  private async refusedBatch(failure: Extract<DestinationOutcome<never>, { ok: false }>['failure'], people: number): Promise<undefined> {
    if (failure.kind !== 'refused' || !BATCH_REFUSALS.has(failure.reason)) throw this.context.stopFor(failure);
    await this.context.progress({ failed: { [failure.reason]: people } });
    return undefined;
  }

  private async rejected(rejected: readonly RejectedMember<number>[]): Promise<void> {
    if (rejected.length === 0) return;
    const failed: Record<string, number> = {};
    let unmatchable = 0;
    for (const rejection of rejected) {
      if (rejection.reason === 'unmatchable') unmatchable++;
      else failed[rejection.reason] = (failed[rejection.reason] ?? 0) + 1;
    }
    await this.context.progress({ failed, unmatchable });
  }
}

/** A Meta upload session (SPEC 10.3): one id per run and operation, batches numbered from 1. */
class MetaSession {
  readonly id = randomInt(1, 2 ** 48);
  private seq = 0;

  constructor(
    readonly audienceId: string,
    readonly operation: 'add' | 'remove',
    readonly estimatedTotal: number,
  ) {}

  nextSeq(): number {
    return ++this.seq;
  }
}
