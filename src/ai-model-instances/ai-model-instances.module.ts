import { Module } from '@nestjs/common';
import { AiModelInstancesController } from './ai-model-instances.controller.js';
import { AiModelInstancesRepository } from './ai-model-instances.repository.js';
import { AiModelInstancesService } from './ai-model-instances.service.js';

@Module({
  controllers: [AiModelInstancesController],
  providers: [AiModelInstancesService, AiModelInstancesRepository],
  exports: [AiModelInstancesService, AiModelInstancesRepository],
})
export class AiModelInstancesModule {}
