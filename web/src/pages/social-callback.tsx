import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { finishSocialSignIn, type Problem, ProblemError, renewSession } from '../api/client';
import { ProblemNotice } from '../components/feedback';
import { SOCIAL_LABELS, socialRedirectUri, takeStartedFlow } from '../social';

/**
 * Where Google or Facebook sends the browser back. The code and state go to /app/session/social/,
 * which signs in (the refresh token lands in the HttpOnly cookie) or, for a link started from the
 * Account page, links the account to the signed-in user.
 */
export function SocialCallbackPage(props: { provider: string; onDone: (linked: boolean) => void }) {
  const { query } = useLocation();
  const provider = props.provider;
  const label = SOCIAL_LABELS[provider] ?? provider;
  const [problem, setProblem] = useState<Problem | null>(null);

  useEffect(() => {
    const started = takeStartedFlow(provider, query.state);
    // The provider's code must not stay in the address bar or the history.
    window.history.replaceState(null, '', window.location.pathname);
    if (!started) {
      setProblem({
        status: 400,
        code: 'invalid_state',
        detail: `This ${label} sign-in was not started here, or was already used. Start again from the sign-in page.`,
      });
      return;
    }
    const linking = started.link;
    if (query.error) {
      setProblem({
        status: 400,
        code: 'access_denied',
        detail: `${label} did not sign you in (${query.error_description ?? query.error}).`,
      });
      return;
    }
    const callback: Record<string, string> = {
      code: query.code ?? '',
      state: query.state ?? '',
      redirect_uri: socialRedirectUri(provider),
    };
    if (query.iss) callback.iss = query.iss;
    (async () => {
      if (linking) await renewSession();
      await finishSocialSignIn(provider, callback, linking);
      props.onDone(linking);
    })().catch((error: unknown) => {
      if (error instanceof ProblemError) setProblem(error.problem);
    });
  }, []);

  return (
    <main class="sign-in" id="main">
      <div class="sign-in-card">
        <h1>Signing in with {label}</h1>
        {problem ? (
          <>
            <ProblemNotice problem={problem} />
            {/* A full load: the app restores its session from the cookie on start. */}
            <button type="button" class="button" onClick={() => window.location.assign('/app/')}>
              Back
            </button>
          </>
        ) : (
          <p role="status">One moment…</p>
        )}
      </div>
    </main>
  );
}
