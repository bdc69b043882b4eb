import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AudienceConnection } from './audience-connection.entity.js';
import { AudienceDestination } from './audience-destination.entity.js';
import { AudienceDestinationsRepository } from './audience-destinations.repository.js';
import { Audience } from './audience.entity.js';
import { AiModelInstancesModule } from '../ai-model-instances/ai-model-instances.module.js';
import { ConnectionsModule } from '../connections/connections.module.js';
import { AudiencesController } from './audiences.controller.js';
import { AudiencesRepository } from './audiences.repository.js';
import { AudiencesService } from './audiences.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([Audience, AudienceConnection, AudienceDestination]), AiModelInstancesModule, ConnectionsModule],
  controllers: [AudiencesController],
  providers: [AudiencesService, AudiencesRepository, AudienceDestinationsRepository],
  exports: [AudiencesService, AudiencesRepository, AudienceDestinationsRepository],
})
export class AudiencesModule {}
