import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AudienceConnection } from './audience-connection.entity.js';
import { Audience } from './audience.entity.js';
import { AiModelInstancesModule } from '../ai-model-instances/ai-model-instances.module.js';
import { ConnectionsModule } from '../connections/connections.module.js';
import { AudiencesController } from './audiences.controller.js';
import { AudiencesRepository } from './audiences.repository.js';
import { AudiencesService } from './audiences.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([Audience, AudienceConnection]), AiModelInstancesModule, ConnectionsModule],
  controllers: [AudiencesController],
  providers: [AudiencesService, AudiencesRepository],
  exports: [AudiencesService, AudiencesRepository],
})
export class AudiencesModule {}
