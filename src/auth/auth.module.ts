import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import { McpTokensModule } from '../mcp-tokens/mcp-tokens.module.js';
import { UsersModule } from '../users/users.module.js';
import { AuthenticationGuard } from './authentication.guard.js';
import { JwtController } from './jwt.controller.js';
import { LoginService } from './login.service.js';
import { RequestRateLimit } from './request-rate-limit.js';
import { SessionsService } from './sessions.service.js';
import { ApiKeyStrategy } from './strategies/api-key.strategy.js';
import { JwtStrategy } from './strategies/jwt.strategy.js';
import { TokenService } from './tokens/token.service.js';

/** Who is calling (SPEC section 2): token endpoints, strategies, and the global guard that denies by default. */
@Module({
  imports: [UsersModule, ApiKeysModule, McpTokensModule],
  controllers: [JwtController],
  providers: [
    TokenService,
    SessionsService,
    LoginService,
    RequestRateLimit,
    JwtStrategy,
    ApiKeyStrategy,
    { provide: APP_GUARD, useClass: AuthenticationGuard },
  ],
  exports: [SessionsService, TokenService],
})
export class AuthModule {}
