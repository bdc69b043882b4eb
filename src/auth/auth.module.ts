import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { JwtModule } from '@nestjs/jwt';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import { McpTokensModule } from '../mcp-tokens/mcp-tokens.module.js';
import { UsersModule } from '../users/users.module.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';
import { AuthSession } from './auth-session.entity.js';
import { AuthSessionsRepository } from './auth-sessions.repository.js';
import { Authenticator } from './authenticator.js';
import { JwtController } from './jwt.controller.js';
import { LoginService } from './login.service.js';
import { RequestGuard } from './request.guard.js';
import { RequestRateLimit } from './request-rate-limit.js';
import { AuthenticationFailuresInterceptor } from './authentication-failures.interceptor.js';
import { SessionsService } from './sessions.service.js';
import { SocialIdentity } from './social/social-identity.entity.js';
import { SocialLoginController } from './social/social-login.controller.js';
import { SocialLoginRepository } from './social/social-login.repository.js';
import { SocialLoginState } from './social/social-login-state.entity.js';
import { SocialLoginService } from './social/social-login.service.js';
import { SocialProviders } from './social/social-providers.js';
import { ApiKeyStrategy } from './strategies/api-key.strategy.js';
import { JwtStrategy } from './strategies/jwt.strategy.js';
import { jwtModuleOptions, TokenService } from './tokens/token.service.js';

/**
 * Who is calling and what they may do (SPEC sections 1-2): token endpoints, social login, the JWT and API-key
 * strategies, and the one global guard, which runs authentication (deny by default, enters the
 * tenant context), the per-credential rate limit and the access policy, in that order.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([AuthSession, SocialLoginState, SocialIdentity]),
    UsersModule,
    ApiKeysModule,
    McpTokensModule,
    JwtModule.registerAsync({ inject: [APP_CONFIG], useFactory: (config: AppConfig) => jwtModuleOptions(config) }),
  ],
  controllers: [JwtController, SocialLoginController],
  providers: [
    TokenService,
    AuthSessionsRepository,
    SessionsService,
    LoginService,
    SocialLoginRepository,
    SocialProviders,
    SocialLoginService,
    RequestRateLimit,
    AuthenticationFailuresInterceptor,
    JwtStrategy,
    ApiKeyStrategy,
    Authenticator,
    { provide: APP_GUARD, useClass: RequestGuard },
  ],
  exports: [
    SessionsService,
    TokenService,
    LoginService,
    SocialLoginService,
    SocialProviders,
    RequestRateLimit,
    AuthenticationFailuresInterceptor,
  ],
})
export class AuthModule {}
