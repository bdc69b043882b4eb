import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { type Problem, ProblemError } from '../api/client';
import { formatDate, Notice, PageHeader, ProblemNotice } from '../components/feedback';
import { useSession } from '../session';
import { SOCIAL_LABELS, startSocial } from '../social';

const ROLE_TEXT = {
  admin: 'Admin: reads and changes everything in the workspace.',
  editor: 'Editor: reads and changes audiences, signals, models and connections.',
  viewer: 'Viewer: reads the workspace; changes nothing (but manages your own MCP tokens).',
};

export function AccountPage() {
  const { user, config } = useSession();
  const { query } = useRoute();
  const [problem, setProblem] = useState<Problem | null>(null);

  const link = (provider: string) => {
    setProblem(null);
    startSocial(provider, true).catch((error: unknown) => error instanceof ProblemError && setProblem(error.problem));
  };

  return (
    <>
      <PageHeader title="Account" />
      {query.linked ? (
        <Notice kind="success">Your {SOCIAL_LABELS[query.linked] ?? query.linked} account is linked: you can sign in with it.</Notice>
      ) : null}
      <ProblemNotice problem={problem} />
      <section class="panel" aria-labelledby="who-heading">
        <h2 id="who-heading">You</h2>
        <dl class="facts">
          <dt>Email</dt>
          <dd>{user.email}</dd>
          <dt>Workspace</dt>
          <dd>#{user.customer}</dd>
          <dt>Role</dt>
          <dd>{ROLE_TEXT[user.role]}</dd>
          <dt>Member since</dt>
          <dd>{formatDate(user.date_joined)}</dd>
        </dl>
      </section>
      <section class="panel" aria-labelledby="link-heading">
        <h2 id="link-heading">Sign-in methods</h2>
        {config.social_providers.length === 0 ? (
          <p>Signing in with Google or Facebook is not set up. Ask your administrator if you would like to use it.</p>
        ) : (
          <>
            <p>Link a Google or Facebook account to sign in with it instead of your password.</p>
            <div class="actions">
              {config.social_providers.map((provider) => (
                <button key={provider} type="button" class="button" onClick={() => link(provider)}>
                  Link {SOCIAL_LABELS[provider] ?? provider}
                </button>
              ))}
            </div>
          </>
        )}
      </section>
    </>
  );
}
