import { SocialProviders } from '../auth/social/social-providers.js';
import type { LoginService } from '../auth/login.service.js';
import type { SessionsService } from '../auth/sessions.service.js';
import type { SocialLoginService } from '../auth/social/social-login.service.js';
import type { TokenService } from '../auth/tokens/token.service.js';
import { Clock } from '../common/time/clock.js';
import { loadConfig } from '../config/app-config.js';
import { PLATFORMS } from '../connections/connection.entity.js';
import { AdPlatformClients, revocationOf } from '../connections/oauth/ad-platform-clients.js';
import { WebSessionController } from './web-session.controller.js';

const BASE_ENV = { NODE_ENV: 'test', JWT_SECRET: 'x'.repeat(32), ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') };
const FACEBOOK = { FACEBOOK_APP_ID: '1234', FACEBOOK_APP_SECRET: 'facebook-secret' };
const GOOGLE = { GOOGLE_OAUTH2_CLIENT_ID: 'google-client', GOOGLE_OAUTH2_CLIENT_SECRET: 'google-secret' };
const META_ADS = { META_APP_ID: '5678', META_APP_SECRET: 'meta-secret' };

/** The controller with the registries the application gives it; the session routes' services are not reached by /config. */
function controllerFor(env: Record<string, string>): WebSessionController {
  const config = loadConfig({ ...BASE_ENV, ...env });
  const unused = <T>() => undefined as unknown as T;
  return new WebSessionController(
    unused<LoginService>(),
    unused<SessionsService>(),
    unused<SocialLoginService>(),
    unused<TokenService>(),
    new SocialProviders(config),
    new AdPlatformClients(config, new Clock()),
    config,
  );
}

describe('GET /app/session/config', () => {
  it('lists only Facebook when only Facebook is configured', () => {
    expect(controllerFor(FACEBOOK).configuration()).toEqual({ social_providers: ['facebook'], ad_platforms: [] });
  });

  it('lists only Google when only Google is configured', () => {
    expect(controllerFor(GOOGLE).configuration().social_providers).toEqual(['google-oauth2']);
  });

  it('lists both providers in the documented order, and only the configured ad platform', () => {
    expect(controllerFor({ ...FACEBOOK, ...GOOGLE, ...META_ADS }).configuration()).toEqual({
      social_providers: ['google-oauth2', 'facebook'],
      ad_platforms: ['meta-ads'],
    });
  });

  it('lists nothing when nothing is configured', () => {
    expect(controllerFor({}).configuration()).toEqual({ social_providers: [], ad_platforms: [] });
  });
});

describe('the registries', () => {
  it('build only the configured providers and clients, each under its own name', () => {
    const config = loadConfig({ ...BASE_ENV, ...FACEBOOK, ...META_ADS });
    const social = new SocialProviders(config);
    expect(social.get('facebook')?.name).toBe('facebook');
    expect(social.get('google-oauth2')).toBeUndefined();
    const ads = new AdPlatformClients(config, new Clock());
    expect(ads.bySlug('meta-ads')?.platform).toBe('meta_ads');
    expect(ads.get('meta_ads')).toBe(ads.bySlug('meta-ads'));
    expect(ads.bySlug('google-ads')).toBeUndefined();
  });

  it('answer nothing for names inherited from Object.prototype', () => {
    const config = loadConfig({ ...BASE_ENV, ...FACEBOOK, ...META_ADS });
    expect(new SocialProviders(config).get('constructor')).toBeUndefined();
    expect(new AdPlatformClients(config, new Clock()).bySlug('constructor')).toBeUndefined();
  });

  it('know how to revoke the grants of every platform a connection can have', () => {
    for (const platform of PLATFORMS) expect(typeof revocationOf(platform)).toBe('function');
  });
});
