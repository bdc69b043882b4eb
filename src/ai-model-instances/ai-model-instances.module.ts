import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AiModelInstance } from './ai-model-instance.entity.js';
import { AiModelInstancesController } from './ai-model-instances.controller.js';
import { AiModelInstancesRepository } from './ai-model-instances.repository.js';
import { AiModelInstancesService } from './ai-model-instances.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([AiModelInstance])],
  controllers: [AiModelInstancesController],
  providers: [AiModelInstancesService, AiModelInstancesRepository],
  exports: [AiModelInstancesService, AiModelInstancesRepository],
})
export class AiModelInstancesModule {}
