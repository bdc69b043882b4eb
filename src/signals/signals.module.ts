import { Module } from '@nestjs/common';
import { SignalsRepository } from './signals.repository.js';

@Module({
  controllers: [],
  providers: [SignalsRepository],
  exports: [SignalsRepository],
})
export class SignalsModule {}
