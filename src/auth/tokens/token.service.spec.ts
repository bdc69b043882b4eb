import jwt from 'jsonwebtoken';
import { SettableClock } from '../../common/time/clock.js';
import { loadConfig } from '../../config/app-config.js';
import { JwtService } from '@nestjs/jwt';
import { jwtModuleOptions, TokenService } from './token.service.js';

const config = loadConfig({
  JWT_SECRET: 's'.repeat(40),
  ENCRYPTION_KEY: Buffer.alloc(32).toString('base64'),
  JWT_ISSUER: 'issuer-under-test',
});
const subject = { userId: 7, customerId: 3, role: 'editor' as const, sessionId: '3f1c2a4e-9b8d-4c7e-a1f2-0d9e8c7b6a50' };

describe('TokenService', () => {
  const clock = new SettableClock();
  const tokens = new TokenService(new JwtService(jwtModuleOptions(config)), config, clock);
  afterEach(() => clock.reset());

  it('issues an access and a refresh token of the same session with the documented claims', () => {
    const pair = tokens.issuePair(subject);
    const access = tokens.verify(pair.access, 'access')!;
    const refresh = tokens.verify(pair.refresh, 'refresh')!;
    expect(access).toMatchObject({
      sub: '7',
      customer: 3,
      role: 'editor',
      type: 'access',
      sid: subject.sessionId,
      iss: 'issuer-under-test',
    });
    expect(refresh).toMatchObject({ type: 'refresh', sid: subject.sessionId, jti: pair.refreshJti });
    expect(access.exp - access.iat).toBe(config.jwtAccessTtlSeconds);
    expect(refresh.exp - refresh.iat).toBe(config.jwtRefreshTtlSeconds);
    expect(access.jti).not.toBe(refresh.jti);
    expect(pair.refreshExpiresAt.getTime()).toBe(refresh.exp * 1000);
  });

  it('tells access and refresh tokens apart', () => {
    const pair = tokens.issuePair(subject);
    expect(tokens.verify(pair.access, 'refresh')).toBeNull();
    expect(tokens.verify(pair.refresh, 'access')).toBeNull();
    expect(tokens.verify(pair.refresh)).not.toBeNull();
  });

  it('expires tokens by the injected clock', () => {
    const pair = tokens.issuePair(subject);
    clock.advance((config.jwtAccessTtlSeconds - 1) * 1000);
    expect(tokens.verify(pair.access, 'access')).not.toBeNull();
    clock.advance(2000);
    expect(tokens.verify(pair.access, 'access')).toBeNull();
    expect(tokens.verify(pair.refresh, 'refresh')).not.toBeNull();
  });

  it('refuses alg none, other algorithms, other secrets and other issuers', () => {
    const claims = jwt.decode(tokens.issuePair(subject).access) as jwt.JwtPayload;
    expect(tokens.verify(jwt.sign(claims, '', { algorithm: 'none' }))).toBeNull();
    expect(tokens.verify(jwt.sign(claims, config.jwtSecret, { algorithm: 'HS384' }))).toBeNull();
    expect(tokens.verify(jwt.sign(claims, 'x'.repeat(40), { algorithm: 'HS256' }))).toBeNull();
    expect(tokens.verify(jwt.sign({ ...claims, iss: 'someone-else' }, config.jwtSecret, { algorithm: 'HS256' }))).toBeNull();
  });

  it('refuses well-signed tokens whose claims are not ours', () => {
    const claims = jwt.decode(tokens.issuePair(subject).access) as jwt.JwtPayload;
    for (const bad of [{ sub: 7 }, { sub: 'abc' }, { role: 'owner' }, { type: 'id' }, { sid: 'not-a-uuid' }, { customer: '3' }]) {
      expect(tokens.verify(jwt.sign({ ...claims, ...bad }, config.jwtSecret, { algorithm: 'HS256' }))).toBeNull();
    }
  });

  it('refuses garbage', () => {
    for (const garbage of ['', 'abc', 'a.b.c', `${tokens.issuePair(subject).access}x`]) expect(tokens.verify(garbage)).toBeNull();
  });
});
