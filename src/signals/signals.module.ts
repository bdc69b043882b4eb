import { Module } from '@nestjs/common';
import { WebhooksModule } from '../webhooks/webhooks.module.js';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Signal } from './signal.entity.js';
import { AiModelInstancesModule } from '../ai-model-instances/ai-model-instances.module.js';
import { AudiencesModule } from '../audiences/audiences.module.js';
import { ConnectionsModule } from '../connections/connections.module.js';
import { SignalsConnectionRemoval } from './signals-connection-removal.js';
import { SignalsController } from './signals.controller.js';
import { SignalsRepository } from './signals.repository.js';
import { SignalsService } from './signals.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([Signal]), AiModelInstancesModule, ConnectionsModule, AudiencesModule, WebhooksModule],
  controllers: [SignalsController],
  providers: [SignalsService, SignalsRepository, SignalsConnectionRemoval],
  exports: [SignalsService, SignalsRepository],
})
export class SignalsModule {}
