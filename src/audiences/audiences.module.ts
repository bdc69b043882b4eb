import { Module } from '@nestjs/common';
import { AiModelInstancesRepository } from '../ai-model-instances/ai-model-instances.repository.js';
import { ConnectionsRepository } from '../connections/connections.repository.js';
import { AudiencesController } from './audiences.controller.js';
import { AudiencesRepository } from './audiences.repository.js';
import { AudiencesService } from './audiences.service.js';

@Module({
  controllers: [AudiencesController],
  providers: [AudiencesService, AudiencesRepository, AiModelInstancesRepository, ConnectionsRepository],
  exports: [AudiencesService, AudiencesRepository],
})
export class AudiencesModule {}
