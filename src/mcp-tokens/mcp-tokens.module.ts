import { Module } from '@nestjs/common';
import { McpTokensController } from './mcp-tokens.controller.js';
import { McpTokensService } from './mcp-tokens.service.js';

@Module({
  controllers: [McpTokensController],
  providers: [McpTokensService],
  exports: [McpTokensService],
})
export class McpTokensModule {}
