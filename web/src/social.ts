import { api } from './api/client';

/** Where a provider sends the browser back: a page of this app (it must be in SOCIAL_AUTH_ALLOWED_REDIRECT_URIS). */
export function socialRedirectUri(provider: string): string {
  return `${window.location.origin}/app/auth/callback/${provider}`;
}

/** Remembers across the provider's page that this flow links an account rather than signs in (not a secret). */
const LINKING = 'audience-social-linking';

export const SOCIAL_LABELS: Record<string, string> = { 'google-oauth2': 'Google', facebook: 'Facebook' };

/** Starts a social sign-in, or (signed in) a link of the provider account to the current user. */
export async function startSocial(provider: string, link: boolean): Promise<void> {
  const query = new URLSearchParams({ redirect_uri: socialRedirectUri(provider) });
  const started = await api<{ authorization_url: string }>('GET', `/api/v1/auth/o/${provider}/?${query.toString()}`);
  if (link) sessionStorage.setItem(LINKING, provider);
  else sessionStorage.removeItem(LINKING);
  window.location.assign(started.authorization_url);
}

/** True once for the callback of a link flow started in this tab. */
export function takeLinking(provider: string): boolean {
  const linking = sessionStorage.getItem(LINKING) === provider;
  sessionStorage.removeItem(LINKING);
  return linking;
}
