import { Module } from '@nestjs/common';
import { WebhooksModule } from '../webhooks/webhooks.module.js';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AudiencesModule } from '../audiences/audiences.module.js';
import { ConnectionsModule } from '../connections/connections.module.js';
import { PlatformRateBudget } from './platform-rate-budget.js';
import { SyncMaintenanceRepository } from './sync-maintenance.repository.js';
import { SyncMembersRepository } from './sync-members.repository.js';
import { SyncRateBudget } from './sync-rate-budget.entity.js';
import { SyncRun } from './sync-run.entity.js';
import { SyncRunner } from './sync-runner.service.js';
import { SyncSentMember } from './sync-sent-member.entity.js';
import { SyncsController } from './syncs.controller.js';
import { SyncsRepository } from './syncs.repository.js';
import { SyncsService } from './syncs.service.js';

/** Audience syncs to the ad platforms (SPEC 10.3): the runs resource, the job that sends, and the triggers. */
@Module({
  imports: [TypeOrmModule.forFeature([SyncRun, SyncSentMember, SyncRateBudget]), AudiencesModule, ConnectionsModule, WebhooksModule],
  controllers: [SyncsController],
  providers: [SyncsService, SyncRunner, SyncsRepository, SyncMembersRepository, SyncMaintenanceRepository, PlatformRateBudget],
  exports: [SyncsService, PlatformRateBudget],
})
export class SyncsModule {}
