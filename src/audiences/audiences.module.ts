import { Module } from '@nestjs/common';
import { AiModelInstancesModule } from '../ai-model-instances/ai-model-instances.module.js';
import { ConnectionsModule } from '../connections/connections.module.js';
import { AudiencesController } from './audiences.controller.js';
import { AudiencesRepository } from './audiences.repository.js';
import { AudiencesService } from './audiences.service.js';

@Module({
  imports: [AiModelInstancesModule, ConnectionsModule],
  controllers: [AudiencesController],
  providers: [AudiencesService, AudiencesRepository],
  exports: [AudiencesService, AudiencesRepository],
})
export class AudiencesModule {}
