import { useLayoutEffect, useState } from 'preact/hooks';
import { type Problem, ProblemError, signIn } from '../api/client';
import type { WebConfig } from '../api/types';
import { ProblemNotice } from '../components/feedback';
import { TextField } from '../components/fields';
import { SOCIAL_LABELS, startSocial } from '../social';

export function SignInPage(props: { config: WebConfig | null; onSignedIn: () => void; notice?: string }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  // With the heading, as PageHeader does for the other pages.
  useLayoutEffect(() => {
    document.title = 'Sign in · Audience and Signal Platform';
  }, []);

  const submit = async () => {
    setBusy(true);
    setProblem(null);
    try {
      await signIn(email, password);
      props.onSignedIn();
    } catch (error) {
      if (error instanceof ProblemError) setProblem(error.problem);
      else throw error;
    } finally {
      setBusy(false);
    }
  };
  const social = async (provider: string) => {
    setProblem(null);
    try {
      await startSocial(provider, false);
    } catch (error) {
      if (error instanceof ProblemError) setProblem(error.problem);
    }
  };

  return (
    <main class="sign-in" id="main">
      <div class="sign-in-card">
        <p class="brand">
          <img src="/app/favicon.svg" alt="" width={28} height={28} /> Audience and Signal Platform
        </p>
        <h1>Sign in</h1>
        {props.notice ? <p class="hint">{props.notice}</p> : null}
        <ProblemNotice problem={problem} fieldsShown />
        <form
          class="form"
          aria-label="Sign in"
          onSubmit={(event) => {
            event.preventDefault();
            void submit();
          }}
        >
          <TextField
            label="Email"
            name="email"
            type="email"
            autoComplete="username"
            required
            value={email}
            onValue={setEmail}
            errors={problem?.errors?.email}
          />
          <TextField
            label="Password"
            name="password"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onValue={setPassword}
            errors={problem?.errors?.password}
          />
          <button type="submit" class="button button-primary button-wide" disabled={busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
        {props.config && props.config.social_providers.length > 0 ? (
          <div class="social">
            <p class="divider">or</p>
            {props.config.social_providers.map((provider) => (
              <button key={provider} type="button" class="button button-wide" onClick={() => void social(provider)}>
                Continue with {SOCIAL_LABELS[provider] ?? provider}
              </button>
            ))}
          </div>
        ) : null}
      </div>
    </main>
  );
}
