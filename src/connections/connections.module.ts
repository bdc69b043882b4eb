import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Signal } from '../signals/signal.entity.js';
import { Connection } from './connection.entity.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';
import { SignalsRepository } from '../signals/signals.repository.js';
import { ConnectionsController } from './connections.controller.js';
import { ConnectionsRepository } from './connections.repository.js';
import { ConnectionsService } from './connections.service.js';
import { ProviderRevoker } from './provider-revoker.js';
import { TokenCipher } from './token-cipher.js';

@Module({
  imports: [TypeOrmModule.forFeature([Connection, Signal])],
  controllers: [ConnectionsController],
  providers: [
    ConnectionsRepository,
    ConnectionsService,
    ProviderRevoker,
    { provide: TokenCipher, useFactory: (config: AppConfig) => TokenCipher.fromConfig(config), inject: [APP_CONFIG] },
    // Provided here rather than by importing SignalsModule, which will need ConnectionsModule
    // (a signal checks its connection): importing each other would be a circular module import.
    // The repository is stateless, so a second instance is harmless.
    SignalsRepository,
  ],
  exports: [ConnectionsRepository, ConnectionsService, TokenCipher],
})
export class ConnectionsModule {}
