import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../../common/time/clock.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.token.js';
import type { Platform } from '../connection.entity.js';
import type { AdPlatformClient } from './platforms/ad-platform-client.js';
import { GoogleAdsClient } from './platforms/google-ads.client.js';
import { MetaAdsClient } from './platforms/meta-ads.client.js';

/** The configured ad platforms' clients; a platform without an OAuth app has none. */
@Injectable()
export class AdPlatformClients {
  private readonly clients = new Map<Platform, AdPlatformClient>();

  constructor(@Inject(APP_CONFIG) config: AppConfig, clock: Clock) {
    const now = () => clock.nowMs();
    const { googleAds, metaAds } = config.adPlatforms;
    if (googleAds) this.clients.set('google_ads', new GoogleAdsClient(googleAds, config.providerTimeoutMs, now));
    if (metaAds) this.clients.set('meta_ads', new MetaAdsClient(metaAds, config.metaGraphUrl, config.providerTimeoutMs, now));
  }

  get(platform: Platform): AdPlatformClient | undefined {
    return this.clients.get(platform);
  }
}
