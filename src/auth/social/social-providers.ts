import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.token.js';
import { FacebookProvider } from './facebook.provider.js';
import { GoogleOidcProvider } from './google-oidc.provider.js';
import type { SocialProvider } from './social-provider.js';

/**
 * Every provider this service can sign in with, by its djoser / python-social-auth name, and how it
 * is built from the configuration (undefined when it is not configured). A new provider is its
 * class and one line here: the routes' OpenAPI enums, the web interface's options and the login
 * service all read this table.
 */
const PROVIDER_FACTORIES = {
  'google-oauth2': ({ socialLogin: { google }, providerTimeoutMs }) => google && new GoogleOidcProvider(google, providerTimeoutMs),
  facebook: ({ socialLogin: { facebook }, providerTimeoutMs }) => facebook && new FacebookProvider(facebook, providerTimeoutMs),
} as const satisfies Record<string, (config: AppConfig) => SocialProvider | undefined>;

export type SocialProviderName = keyof typeof PROVIDER_FACTORIES;

/** The providers of SPEC section 2, configured or not, in the order the API documents them. */
export const SOCIAL_PROVIDERS = Object.keys(PROVIDER_FACTORIES) as SocialProviderName[];

/** The configured social-login providers: the one place that knows which exist on this server. */
@Injectable()
export class SocialProviders {
  private readonly providers = new Map<string, SocialProvider>();

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    for (const name of SOCIAL_PROVIDERS) {
      const provider = PROVIDER_FACTORIES[name](config);
      if (!provider) continue;
      // The name is stored with every state and linked identity: a class answering to another would orphan them.
      if (provider.name !== name) throw new Error(`The social provider registered as "${name}" calls itself "${provider.name}"`);
      this.providers.set(name, provider);
    }
  }

  /** The provider of that name, or undefined when it is unknown or not configured. */
  get(name: string): SocialProvider | undefined {
    return this.providers.get(name);
  }

  /** The configured providers' names, in SOCIAL_PROVIDERS order. */
  names(): SocialProviderName[] {
    return SOCIAL_PROVIDERS.filter((name) => this.providers.has(name));
  }
}
