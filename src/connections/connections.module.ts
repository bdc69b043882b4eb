import { Module } from '@nestjs/common';
import { ConnectionsRepository } from './connections.repository.js';

@Module({
  controllers: [],
  providers: [ConnectionsRepository],
  exports: [ConnectionsRepository],
})
export class ConnectionsModule {}
