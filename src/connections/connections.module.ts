import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Connection } from './connection.entity.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';
import { ConnectionRemovalHandlers } from './connection-removal.js';
import { ConnectionsController } from './connections.controller.js';
import { ConnectionsRepository } from './connections.repository.js';
import { ConnectionsService } from './connections.service.js';
import { ProviderRevoker } from './provider-revoker.js';
import { TokenCipher } from './token-cipher.js';

@Module({
  imports: [TypeOrmModule.forFeature([Connection])],
  controllers: [ConnectionsController],
  providers: [
    ConnectionsRepository,
    ConnectionsService,
    ConnectionRemovalHandlers,
    ProviderRevoker,
    { provide: TokenCipher, useFactory: (config: AppConfig) => TokenCipher.fromConfig(config), inject: [APP_CONFIG] },
  ],
  exports: [ConnectionsRepository, ConnectionsService, ConnectionRemovalHandlers, TokenCipher],
})
export class ConnectionsModule {}
