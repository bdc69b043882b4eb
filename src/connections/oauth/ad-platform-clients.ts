import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../../common/time/clock.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.token.js';
import type { Platform } from '../connection.entity.js';
import type { AdPlatformClient, GrantRevocation } from './platforms/ad-platform-client.js';
import { GoogleAdsClient, revokeGoogleAdsGrant } from './platforms/google-ads.client.js';
import { MetaAdsClient, revokeMetaAdsGrant } from './platforms/meta-ads.client.js';

interface AdPlatformEntry {
  platform: Platform;
  /** The platform's client, or undefined when its OAuth app is not configured. */
  build(config: AppConfig, now: () => number): AdPlatformClient | undefined;
  /** Needed configured or not: connections outlive their OAuth app's settings. */
  revocation: GrantRevocation;
}

/**
 * Every ad platform a connection can be made with, by its URL segment (`/oauth/connections/google-ads/…`).
 * A new platform is its client class and one entry here: the flow's routes, their OpenAPI enums,
 * the web interface's options and the revocation on delete all read this table.
 */
const AD_PLATFORMS = {
  'google-ads': {
    platform: 'google_ads',
    build: ({ adPlatforms: { googleAds }, providerTimeoutMs }, now) => googleAds && new GoogleAdsClient(googleAds, providerTimeoutMs, now),
    revocation: revokeGoogleAdsGrant,
  },
  'meta-ads': {
    platform: 'meta_ads',
    build: ({ adPlatforms: { metaAds }, metaGraphUrl, providerTimeoutMs }, now) =>
      metaAds && new MetaAdsClient(metaAds, metaGraphUrl, providerTimeoutMs, now),
    revocation: revokeMetaAdsGrant,
  },
} as const satisfies Record<string, AdPlatformEntry>;

/** The URL segments of every known platform, configured or not, in the order the API documents them. */
export const AD_PLATFORM_SLUGS = Object.keys(AD_PLATFORMS) as (keyof typeof AD_PLATFORMS)[];

/** The platform a URL segment names, or undefined (an own-property lookup: `constructor` is no platform). */
export function platformOfSlug(slug: string): Platform | undefined {
  return Object.hasOwn(AD_PLATFORMS, slug) ? AD_PLATFORMS[slug as keyof typeof AD_PLATFORMS].platform : undefined;
}

/** How a platform's grants are revoked, whether or not its OAuth app is configured now. */
export function revocationOf(platform: Platform): GrantRevocation {
  const entry = Object.values(AD_PLATFORMS).find((candidate) => candidate.platform === platform);
  if (!entry) throw new Error(`No ad platform "${platform}" in AD_PLATFORMS`);
  return entry.revocation;
}

/** The configured ad platforms' clients, the one door to them; a platform without an OAuth app has none. */
@Injectable()
export class AdPlatformClients {
  private readonly clients = new Map<Platform, AdPlatformClient>();
  private readonly configured: string[] = [];

  constructor(@Inject(APP_CONFIG) config: AppConfig, clock: Clock) {
    const now = () => clock.nowMs();
    for (const slug of AD_PLATFORM_SLUGS) {
      const { platform, build } = AD_PLATFORMS[slug];
      const client = build(config, now);
      if (!client) continue;
      // Stored connections name their platform: a client answering to another would refresh the wrong grants.
      if (client.platform !== platform) throw new Error(`The ad platform client registered as "${slug}" is for "${client.platform}"`);
      this.clients.set(platform, client);
      this.configured.push(slug);
    }
  }

  get(platform: Platform): AdPlatformClient | undefined {
    return this.clients.get(platform);
  }

  /** The client behind a URL segment, or undefined when the platform is unknown or not configured. */
  bySlug(slug: string): AdPlatformClient | undefined {
    const platform = platformOfSlug(slug);
    return platform === undefined ? undefined : this.clients.get(platform);
  }

  /** The configured platforms' URL segments, in AD_PLATFORM_SLUGS order. */
  slugs(): string[] {
    return [...this.configured];
  }
}
