import { SyncsModule } from '../syncs/syncs.module.js';
import { PeopleModule } from '../people/people.module.js';
import { Module } from '@nestjs/common';
import { AiModelInstancesModule } from '../ai-model-instances/ai-model-instances.module.js';
import { AudiencesModule } from '../audiences/audiences.module.js';
import { ConnectionsModule } from '../connections/connections.module.js';
import { ApiDocumentModule } from '../openapi/api-document.js';
import { SignalsModule } from '../signals/signals.module.js';
import { UsersModule } from '../users/users.module.js';
import { McpController } from './mcp.controller.js';
import { McpServerFactory } from './mcp-server.factory.js';

/** AI agents over the Model Context Protocol: the same services as the REST controllers, reached a second way. */
@Module({
  imports: [
    UsersModule,
    AudiencesModule,
    AiModelInstancesModule,
    ConnectionsModule,
    SignalsModule,
    PeopleModule,
    SyncsModule,
    ApiDocumentModule,
  ],
  controllers: [McpController],
  providers: [McpServerFactory],
})
export class McpModule {}
