import type { Connection, WebConfig } from './types';

/** Each ad platform of the document, with the slug of its OAuth flow (`/oauth/connections/{slug}/start`) and its name. */
export const PLATFORMS = {
  google_ads: { slug: 'google-ads', label: 'Google Ads' },
  meta_ads: { slug: 'meta-ads', label: 'Meta Ads' },
} satisfies Record<Connection['platform'], { slug: WebConfig['ad_platforms'][number]; label: string }>;

/** A platform's name; a value the document does not have yet is shown as it is. */
export function platformLabel(platform: string): string {
  return Object.hasOwn(PLATFORMS, platform) ? PLATFORMS[platform as Connection['platform']].label : platform;
}
