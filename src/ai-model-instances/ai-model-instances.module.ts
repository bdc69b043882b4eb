import { Module } from '@nestjs/common';
import { AiModelInstancesRepository } from './ai-model-instances.repository.js';

@Module({
  controllers: [],
  providers: [AiModelInstancesRepository],
  exports: [AiModelInstancesRepository],
})
export class AiModelInstancesModule {}
