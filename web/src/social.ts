import { api } from './api/client';

/** Where a provider sends the browser back: a page of this app (it must be in SOCIAL_AUTH_ALLOWED_REDIRECT_URIS). */
export function socialRedirectUri(provider: string): string {
  return `${window.location.origin}/app/auth/callback/${provider}`;
}

/**
 * What this tab started, kept across the provider's pages: the flow's `state` and whether it links
 * an account rather than signs in. The callback page finishes only a state this tab started, so a
 * link to someone else's callback (their code, their state) cannot sign this browser into their
 * account (login forgery); sessionStorage is per tab and per origin, and the state is single use.
 */
const STARTED = 'audience-social-flow';

interface StartedFlow {
  provider: string;
  state: string;
  link: boolean;
}

export const SOCIAL_LABELS: Record<string, string> = { 'google-oauth2': 'Google', facebook: 'Facebook' };

/** Starts a social sign-in, or (signed in) a link of the provider account to the current user. */
export async function startSocial(provider: string, link: boolean): Promise<void> {
  const query = new URLSearchParams({ redirect_uri: socialRedirectUri(provider) });
  const started = await api<{ authorization_url: string }>('GET', `/api/v1/auth/o/${provider}/?${query.toString()}`);
  const state = new URL(started.authorization_url).searchParams.get('state') ?? '';
  sessionStorage.setItem(STARTED, JSON.stringify({ provider, state, link } satisfies StartedFlow));
  window.location.assign(started.authorization_url);
}

/** The flow this tab started for `provider` with this `state`, once; null for any other callback. */
export function takeStartedFlow(provider: string, state: string | undefined): StartedFlow | null {
  const stored = sessionStorage.getItem(STARTED);
  sessionStorage.removeItem(STARTED);
  if (!stored || !state) return null;
  try {
    const flow = JSON.parse(stored) as StartedFlow;
    return flow.provider === provider && flow.state === state ? flow : null;
  } catch {
    return null;
  }
}
