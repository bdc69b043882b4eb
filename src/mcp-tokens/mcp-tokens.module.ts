import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { McpToken } from './mcp-token.entity.js';
import { McpTokensController } from './mcp-tokens.controller.js';
import { McpTokensRepository } from './mcp-tokens.repository.js';
import { McpTokensService } from './mcp-tokens.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([McpToken])],
  controllers: [McpTokensController],
  providers: [McpTokensRepository, McpTokensService],
  exports: [McpTokensService],
})
export class McpTokensModule {}
