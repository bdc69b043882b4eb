import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AudiencesModule } from '../audiences/audiences.module.js';
import { MembershipsModule } from '../memberships/memberships.module.js';
import { WebhooksModule } from '../webhooks/webhooks.module.js';
import { ImportRow } from './import-row.entity.js';
import { Import } from './import.entity.js';
import { ImportsController } from './imports.controller.js';
import { ImportsRepository } from './imports.repository.js';
import { ImportsService } from './imports.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([Import, ImportRow]), AudiencesModule, MembershipsModule, WebhooksModule],
  controllers: [ImportsController],
  providers: [ImportsService, ImportsRepository],
})
export class ImportsModule {}
