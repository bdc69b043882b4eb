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
import { UsersModule } from '../users/users.module.js';
import { WebhooksModule } from '../webhooks/webhooks.module.js';
import { AdPlatformClients } from './oauth/ad-platform-clients.js';
import { ConnectionFlowState } from './oauth/connection-flow-state.entity.js';
import { ConnectionFlowStatesRepository } from './oauth/connection-flow-states.repository.js';
import { ConnectionFlowController } from './oauth/connection-flow.controller.js';
import { ConnectionFlowService } from './oauth/connection-flow.service.js';
import { ConnectionGrants } from './oauth/connection-grants.js';
import { ConnectionMaintenanceRepository } from './oauth/connection-maintenance.repository.js';
import { ConnectionSweep } from './oauth/connection-sweep.js';

/** Ad-platform connections: the REST resource, the OAuth flows that create them, and the life of their grants. */
@Module({
  imports: [TypeOrmModule.forFeature([Connection, ConnectionFlowState]), UsersModule, WebhooksModule],
  controllers: [ConnectionsController, ConnectionFlowController],
  providers: [
    ConnectionsRepository,
    ConnectionsService,
    ConnectionRemovalHandlers,
    ProviderRevoker,
    AdPlatformClients,
    ConnectionFlowStatesRepository,
    ConnectionMaintenanceRepository,
    ConnectionGrants,
    ConnectionFlowService,
    ConnectionSweep,
    { provide: TokenCipher, useFactory: (config: AppConfig) => TokenCipher.fromConfig(config), inject: [APP_CONFIG] },
  ],
  exports: [
    AdPlatformClients,
    ConnectionsRepository,
    ConnectionsService,
    ConnectionRemovalHandlers,
    TokenCipher,
    ConnectionGrants,
    ConnectionSweep,
  ],
})
export class ConnectionsModule {}
