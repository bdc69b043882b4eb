import { type Readable } from 'node:stream';
import { pipeline } from 'node:stream';
import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { ApiError } from '../common/errors/api-error.js';
import { type Page, pageOf } from '../common/pagination/pagination.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { type Transaction, Transactions } from '../common/tenancy/transactions.js';
import { WebhookEvents } from '../webhooks/webhook-events.js';
import { MESSAGES } from '../common/validation/fields.js';
import { AudiencesRepository } from '../audiences/audiences.repository.js';
import { MembershipsRepository } from '../memberships/memberships.repository.js';
import { APP_CONFIG } from '../config/config.token.js';
import type { AppConfig } from '../config/app-config.js';
import { JOBS } from '../jobs/job-definitions.js';
import { JobHandler } from '../jobs/job-handler.decorator.js';
import { Jobs } from '../jobs/jobs.service.js';
import { LOGGER } from '../logging/logger.token.js';
import type { CreateImportQuery } from './dto/create-import.query.js';
import type { ImportDto } from './dto/import.dto.js';
import type { ListImportsQuery } from './dto/list-imports.query.js';
import { ImportFileError } from './import-row-reader.js';
import {
  csvFileError,
  decodeText,
  type ImportFormat,
  ImportTally,
  ImportTooLargeError,
  parseCsvRecords,
  readRows,
  splitLines,
} from './import-stream.js';
import { importTenant } from './import-tenant.js';
import { toImportDto } from './import.mapper.js';
import type { ImportRowError } from './import.entity.js';
import { type DroppedRows, ImportsRepository } from './imports.repository.js';

const MAX_ERRORS_SAMPLE = 100;

/** The upload as the controller hands it over: the raw body, and the socket to watch for idleness. */
export interface ImportUpload {
  format: ImportFormat;
  body: Readable;
  /** The Content-Length the client announced, if any: over the limit is a 413 before a byte is read. */
  declaredLength?: number;
  /** Calls `onIdle` when the client sends nothing for `ms`; answers a function that stops watching. */
  watchIdle(ms: number, onIdle: () => void): () => void;
}

/** SPEC 10.1, Imports: the upload (streamed, hashed, staged) and the merge job. */
@Injectable()
export class ImportsService {
  constructor(
    private readonly transactions: Transactions,
    private readonly imports: ImportsRepository,
    private readonly jobs: Jobs,
    private readonly tenants: TenantContext,
    private readonly audiences: AudiencesRepository,
    private readonly memberships: MembershipsRepository,
    private readonly webhookEvents: WebhookEvents,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async list(query: ListImportsQuery, url: URL): Promise<Page<ImportDto>> {
    return pageOf(await this.imports.list(query.page), query.page, url, toImportDto);
  }

  async get(id: number): Promise<ImportDto> {
    return toImportDto(await this.imports.getById(id));
  }

  /**
   * Streams the file into the import's staged rows and queues its merge, all in one transaction:
   * an upload that breaks off (client gone, idle, too large) rolls back and leaves no staged row
   * and no job (SPEC 10.6). The transaction stays open while the file arrives, holding one pooled
   * connection per upload in progress. A file that is refused whole (binary, no usable column, an
   * over-long record) is recorded as a failed import with the reason in `errors_sample`.
   */
  async upload(query: CreateImportQuery, upload: ImportUpload): Promise<ImportDto> {
    if (query.target === undefined) throw ApiError.field('target', 'This field is required.');
    await this.checkAudienceTarget(query);
    const limit = this.config.importMaxBytes;
    if (upload.declaredLength !== undefined && upload.declaredLength > limit) throw tooLarge(limit);
    const tally = new ImportTally();
    const customerId = this.tenants.current().customerId;
    try {
      const id = await this.transactions.run(async (transaction) => {
        const created = await this.imports.insert(
          { target: query.target!, audienceId: query.audience ?? null, mode: query.mode ?? null, status: 'receiving' },
          transaction,
        );
        const importId = Number(created.id);
        const stages =
          upload.format === 'csv'
            ? [decodeText(limit), parseCsvRecords(), readRows('csv', tally)]
            : [decodeText(limit), splitLines(), readRows('ndjson', tally)];
        const stopWatching = upload.watchIdle(this.config.importIdleTimeoutMs, () => upload.body.destroy(new Error('import upload idle')));
        const rows = pipeline(
          [upload.body, ...stages] as unknown as [Readable, ...NodeJS.ReadWriteStream[]],
          () => undefined,
        ) as unknown as Readable;
        try {
          await this.imports.stage(importId, rows, transaction);
        } finally {
          stopWatching();
        }
        await this.imports.setOutcome(importId, { status: 'queued', ...counts(tally) }, transaction);
        await this.jobs.enqueue(transaction, JOBS.importMerge, { customerId, importId });
        return importId;
      });
      return await this.get(id);
    } catch (error) {
      if (error instanceof ImportTooLargeError) throw tooLarge(limit);
      const refusal = error instanceof ImportFileError ? error : csvFileError(error);
      if (refusal === undefined) throw error;
      const failedId = await this.transactions.run(async (transaction) => {
        const failed = await this.imports.insert(
          {
            target: query.target!,
            audienceId: query.audience ?? null,
            mode: query.mode ?? null,
            status: 'failed',
            ...counts(tally),
            errorsSample: [...tally.errorsSample.slice(0, MAX_ERRORS_SAMPLE - 1), { line: refusal.line, errors: { file: [refusal.code] } }],
          },
          transaction,
        );
        await this.imports.setOutcome(
          Number(failed.id),
          { status: 'failed', ...counts(tally), errorsSample: failed.errorsSample, finishedAt: 'now' },
          transaction,
        );
        await this.announceFinished(Number(failed.id), transaction);
        return Number(failed.id);
      });
      return this.get(failedId);
    }
  }

  /**
   * `target=audience` names an upload audience of the workspace and a mode (SPEC 10.1); `audience`
   * and `mode` go with it only. Another source type or an archived audience is a 409, as for the
   * members route.
   */
  private async checkAudienceTarget(query: CreateImportQuery): Promise<void> {
    if (query.target !== 'audience') {
      const errors: Record<string, string[]> = {};
      if (query.audience !== undefined) errors.audience = ['Only with target=audience.'];
      if (query.mode !== undefined) errors.mode = ['Only with target=audience.'];
      if (Object.keys(errors).length > 0) throw ApiError.validation(errors);
      return;
    }
    const errors: Record<string, string[]> = {};
    if (query.audience === undefined) errors.audience = ['This field is required with target=audience.'];
    if (query.mode === undefined) errors.mode = ['This field is required with target=audience.'];
    if (Object.keys(errors).length > 0) throw ApiError.validation(errors);
    const audience = await this.audiences.findById(query.audience!);
    if (audience === null) throw ApiError.field('audience', MESSAGES.doesNotExist(query.audience));
    if (audience.sourceType !== 'upload')
      throw ApiError.conflict(`Members are computed for a ${audience.sourceType} audience; only upload audiences take imported members.`);
    if (audience.status === 'archived') throw ApiError.conflict('This audience is archived: its members are frozen.');
  }

  /** The staged people upserted as a batch would be: their traits checked against the 100-key limit, then one upsert with their hashes. */
  private async upsertStagedPeople(importId: number, transaction: Transaction): Promise<DroppedRows> {
    await this.imports.lockNamedPeople(importId, transaction);
    const crowded = await this.imports.dropTooManyTraits(importId, transaction);
    await this.imports.upsertPeople(importId, transaction);
    return crowded;
  }

  /**
   * The merge (SPEC 10.1: all accepted rows or nothing). Safe to run twice: the import row is
   * locked first and only a `queued` or `processing` import is merged; the merge, the deletion of
   * its staged rows and the `succeeded` mark commit together, so a second run finds the import
   * finished and does nothing, and a run that died mid-merge rolled back whole and is redone.
   * A merge that throws changes nothing: the import is marked `failed` (its staged rows deleted)
   * and the job ends without a retry, since the same rows would fail the same way.
   */
  @JobHandler(JOBS.importMerge)
  async mergeJob(payload: { customerId: number; importId: number }): Promise<void> {
    await this.tenants.run(importTenant(payload.customerId), () => this.merge(payload.importId));
  }

  async merge(importId: number): Promise<void> {
    if (!(await this.imports.markProcessing(importId))) return;
    try {
      await this.transactions.run(async (transaction) => {
        const row = await this.imports.lockedStatus(importId, transaction);
        if (row === undefined || (row.status !== 'queued' && row.status !== 'processing')) return;
        await this.imports.tuneMerge(transaction);
        // An audience import applies to an upload audience that is still one (it is locked until the end).
        const audienceId = row.target === 'audience' ? Number(row.audienceId) : undefined;
        let audienceActive = false;
        if (audienceId !== undefined) {
          const audience = await this.audiences.findById(audienceId, { transaction, lock: true });
          if (audience === null || audience.sourceType !== 'upload' || audience.status === 'archived') throw new AudienceUnavailableError();
          audienceActive = audience.status === 'active';
        }
        const duplicates = await this.imports.dropDuplicates(importId, transaction);
        // A removal names people; it creates or changes none.
        const crowded = row.mode === 'remove' ? { count: 0, sample: [] } : await this.upsertStagedPeople(importId, transaction);
        if (audienceId !== undefined) {
          const applied = await this.memberships.applyImport(audienceId, importId, row.mode!, transaction);
          // The audience's destinations follow (SPEC 10.3), debounced per audience.
          const customerId = this.tenants.current().customerId;
          if (applied.added + applied.removed > 0 && audienceActive)
            await this.jobs.enqueue(
              transaction,
              JOBS.syncMembershipChanged,
              { customerId, audienceId },
              { key: `${customerId}:${audienceId}` },
            );
        }
        await this.imports.deleteStaged(importId, transaction);
        // SPEC 10.2: the workspace's audiences follow its people (a debounced recompute).
        await this.jobs.enqueue(
          transaction,
          JOBS.membershipWorkspaceChanged,
          { customerId: this.tenants.current().customerId },
          {
            key: String(this.tenants.current().customerId),
          },
        );
        const outcome = {
          status: 'succeeded' as const,
          rowsTotal: Number(row.rowsTotal),
          rowsAccepted: Number(row.rowsAccepted),
          rowsRejected: Number(row.rowsRejected),
          rejectedByReason: { ...row.rejectedByReason },
          errorsSample: [...row.errorsSample],
          finishedAt: 'now' as const,
        };
        drop(outcome, duplicates, { external_id: ['duplicate_external_id'] });
        drop(outcome, crowded, { traits: ['too_many_traits'] });
        outcome.errorsSample.sort((a, b) => a.line - b.line);
        outcome.errorsSample.splice(MAX_ERRORS_SAMPLE);
        await this.imports.setOutcome(importId, outcome, transaction);
        await this.announceFinished(importId, transaction);
      });
    } catch (error) {
      // Only the error's class and code: a database error's detail can quote a row's values.
      if (!(error instanceof AudienceUnavailableError))
        this.logger.error({ importId, error: (error as Error).name, code: (error as { code?: string }).code }, 'import merge failed');
      const reason = error instanceof AudienceUnavailableError ? 'audience_unavailable' : 'merge_failed';
      await this.transactions.run(async (transaction) => {
        const row = await this.imports.lockedStatus(importId, transaction);
        if (row === undefined) return;
        await this.imports.deleteStaged(importId, transaction);
        await this.imports.setOutcome(
          importId,
          {
            status: 'failed',
            rowsTotal: Number(row.rowsTotal),
            rowsAccepted: 0,
            rowsRejected: Number(row.rowsRejected),
            rejectedByReason: row.rejectedByReason,
            errorsSample: [...row.errorsSample.slice(0, MAX_ERRORS_SAMPLE - 1), { line: 1, errors: { file: [reason] } }],
            finishedAt: 'now',
          },
          transaction,
        );
        await this.announceFinished(importId, transaction);
      });
    }
  }

  /** SPEC 10.5: `import.finished`, with the import as the API shows it, in the transaction that finished it. */
  private async announceFinished(importId: number, transaction: Transaction): Promise<void> {
    const finished = await this.imports.getById(importId, { transaction });
    await this.webhookEvents.emit(transaction, 'import.finished', toImportDto(finished));
  }
}

/** The audience of an audience import was deleted, archived or changed its source while the import waited. */
class AudienceUnavailableError extends Error {
  constructor() {
    super('The audience no longer takes imported members.');
    this.name = 'AudienceUnavailableError';
  }
}

function counts(tally: ImportTally) {
  return {
    rowsTotal: tally.rowsTotal,
    rowsAccepted: tally.rowsAccepted,
    rowsRejected: tally.rowsRejected,
    rejectedByReason: tally.rejectedByReason,
    errorsSample: tally.errorsSample as ImportRowError[],
  };
}

function drop(
  outcome: { rowsAccepted: number; rowsRejected: number; rejectedByReason: Record<string, number>; errorsSample: ImportRowError[] },
  dropped: DroppedRows,
  errors: Record<string, string[]>,
): void {
  if (dropped.count === 0) return;
  outcome.rowsAccepted -= dropped.count;
  outcome.rowsRejected += dropped.count;
  const code = Object.values(errors)[0][0];
  outcome.rejectedByReason[code] = (outcome.rejectedByReason[code] ?? 0) + dropped.count;
  for (const line of dropped.sample) outcome.errorsSample.push({ line, errors });
}

function tooLarge(limit: number): ApiError {
  return new ApiError(413, 'payload_too_large', `The file is larger than IMPORT_MAX_BYTES (${limit} bytes).`);
}
