import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { ExtractJwt, Strategy } from 'passport-jwt';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.token.js';
import type { Identity } from '../../common/access/identity.js';
import { SessionsService, tokenNotValid } from '../sessions.service.js';
import { JWT_ALGORITHMS, jwtSigningKey, TokenService } from '../tokens/token.service.js';

/**
 * `Authorization: Bearer <access JWT>`. passport-jwt checks the signature, the algorithm (HS256
 * only) and the issuer; expiry is checked against our Clock in TokenService.checkClaims, and the
 * session (not logged out, not reused, user active) through the credential cache.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly tokens: TokenService,
    private readonly sessions: SessionsService,
  ) {
    super({
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      // The prebuilt KeyObject: a string secret costs a key derivation on every request.
      secretOrKey: jwtSigningKey(config) as unknown as string,
      algorithms: JWT_ALGORITHMS,
      issuer: config.jwtIssuer,
      ignoreExpiration: true,
    });
  }

  async validate(payload: unknown): Promise<Identity> {
    const claims = this.tokens.checkClaims(payload, 'access');
    if (!claims) throw tokenNotValid();
    const session = await this.sessions.activeState(claims.sid);
    if (!session || String(session.userId) !== claims.sub) throw tokenNotValid();
    return {
      kind: 'user',
      userId: session.userId,
      customerId: session.customerId,
      role: session.role,
      sessionId: claims.sid,
      tokenId: claims.jti,
    };
  }
}
