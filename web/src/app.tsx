import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ErrorBoundary, LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { api, isSignedIn, onSignedOut, type Problem, ProblemError, renewSession, signOut } from './api/client';
import type { CurrentUser, WebConfig } from './api/types';
import { Loading, Notice, NotFound, ProblemNotice } from './components/feedback';
import { AccountPage } from './pages/account';
import { AudiencePage, AudiencesPage } from './pages/audiences';
import { ConnectionsPage } from './pages/connections';
import { ImportPage, ImportsPage } from './pages/imports';
import { McpTokensPage } from './pages/mcp-tokens';
import { ModelPage, ModelsPage } from './pages/models';
import { PeoplePage, PersonPage } from './pages/people';
import { SignalPage, SignalsPage } from './pages/signals';
import { SignInPage } from './pages/sign-in';
import { SyncPage, SyncsPage } from './pages/syncs';
import { SocialCallbackPage } from './pages/social-callback';
import { WebhooksPage } from './pages/webhooks';
import { SessionContext, type SessionState } from './session';

type Phase =
  { kind: 'starting' } | { kind: 'signed-out'; notice?: string } | { kind: 'failed' } | { kind: 'signed-in'; session: SessionState };

const NAVIGATION = [
  { href: '/app/audiences', label: 'Audiences' },
  { href: '/app/people', label: 'People' },
  { href: '/app/imports', label: 'Imports' },
  { href: '/app/syncs', label: 'Syncs' },
  { href: '/app/signals', label: 'Signals' },
  { href: '/app/models', label: 'AI models' },
  { href: '/app/connections', label: 'Connections' },
  { href: '/app/mcp-tokens', label: 'MCP tokens' },
  // Workspace settings: for admins, who manage them (others can still open the page and read it).
  { href: '/app/settings/webhooks', label: 'Webhooks', adminOnly: true },
  { href: '/app/account', label: 'Account' },
];

export function App() {
  return (
    <LocationProvider scope="/app">
      <ErrorBoundary>
        <Root />
      </ErrorBoundary>
    </LocationProvider>
  );
}

/** Restores the session from its cookie on load, then shows the sign-in page or the app. */
function Root() {
  const location = useLocation();
  const [phase, setPhase] = useState<Phase>({ kind: 'starting' });
  const [config, setConfig] = useState<WebConfig | null>(null);

  /** Reads who is signed in; a failure here (the service unreachable) is a page, not a silent hang. */
  const enter = () => loadSession().catch(() => setPhase({ kind: 'failed' }));
  const loadSession = async () => {
    const [user, options] = await Promise.all([api<CurrentUser>('GET', '/api/v1/users/me/'), api<WebConfig>('GET', '/app/session/config')]);
    setConfig(options);
    setPhase({
      kind: 'signed-in',
      session: {
        user,
        config: options,
        canWrite: user.role !== 'viewer',
        // A failed sign-out throws and leaves the session as it is: the shell says so.
        signOut: async () => {
          await signOut();
          setPhase({ kind: 'signed-out', notice: 'You are signed out.' });
          location.route('/app/');
        },
      },
    });
  };

  useEffect(() => {
    const stop = onSignedOut(() => setPhase({ kind: 'signed-out', notice: 'Your session has ended. Sign in again.' }));
    if (location.path.startsWith('/app/auth/callback/')) return stop;
    api<WebConfig>('GET', '/app/session/config').then(setConfig, () => setConfig(null));
    renewSession()
      .then((restored) => (restored ? enter() : setPhase({ kind: 'signed-out' })))
      .catch(() => setPhase({ kind: 'failed' }));
    return stop;
  }, []);

  if (location.path.startsWith('/app/auth/callback/')) {
    const provider = decodeURIComponent(location.path.slice('/app/auth/callback/'.length).replace(/\/$/, ''));
    return (
      <SocialCallbackPage
        provider={provider}
        onDone={(linked) => {
          location.route(linked ? `/app/account?linked=${encodeURIComponent(provider)}` : '/app/audiences', true);
          void enter();
        }}
      />
    );
  }
  if (phase.kind === 'starting') return <Loading label="Starting…" />;
  if (phase.kind === 'failed')
    return (
      <main class="sign-in" id="main">
        <Notice kind="error">The service could not be reached. Reload the page to try again.</Notice>
      </main>
    );
  if (phase.kind === 'signed-out' || !isSignedIn())
    return <SignInPage config={config} notice={phase.kind === 'signed-out' ? phase.notice : undefined} onSignedIn={() => void enter()} />;
  return (
    <SessionContext.Provider value={phase.session}>
      <Shell session={phase.session} />
    </SessionContext.Provider>
  );
}

function Shell(props: { session: SessionState }) {
  const { path } = useLocation();
  const { user } = props.session;
  const [problem, setProblem] = useState<Problem | null>(null);
  // On a narrow screen the navigation is behind the Menu button (styles.css), and closes once a page is chosen.
  const [menuOpen, setMenuOpen] = useState(false);
  // After a move to another page, focus goes to the content, so a screen reader starts there.
  // In the same commit as the new page, not after the paint: no moment shows the new page's
  // heading under a menu that is still open.
  const main = useRef<HTMLElement>(null);
  const moved = useRef(false);
  useLayoutEffect(() => {
    setMenuOpen(false);
    if (moved.current) main.current?.focus();
    moved.current = true;
  }, [path]);
  const leave = () => {
    setProblem(null);
    props.session.signOut().catch((error: unknown) => {
      if (error instanceof ProblemError) setProblem(error.problem);
    });
  };
  return (
    <div class="shell">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <button
          type="button"
          class="button menu-button"
          aria-expanded={menuOpen}
          aria-controls="main-navigation"
          onClick={() => setMenuOpen((open) => !open)}
        >
          Menu
        </button>
        <a class="brand" href="/app/audiences">
          <img src="/app/favicon.svg" alt="" width={24} height={24} />
          Audience and Signal Platform
        </a>
        <div class="whoami">
          <span class="whoami-name">
            {user.email} · <span class={`role role-${user.role}`}>{user.role}</span>
          </span>
          <button type="button" class="button button-quiet" onClick={leave}>
            Sign out
          </button>
        </div>
      </header>
      <nav id="main-navigation" class={`sidebar${menuOpen ? ' sidebar-open' : ''}`} aria-label="Main">
        <ul>
          {NAVIGATION.filter((item) => !item.adminOnly || user.role === 'admin').map((item) => (
            <li key={item.href}>
              <a href={item.href} aria-current={path === item.href || path.startsWith(`${item.href}/`) ? 'page' : undefined}>
                {item.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main class="content" id="main" tabIndex={-1} ref={main}>
        <ProblemNotice problem={problem} />
        <Router>
          <Route path="/app" component={Home} />
          <Route path="/app/audiences" component={AudiencesPage} />
          <Route path="/app/audiences/:id" component={AudiencePage} />
          <Route path="/app/people" component={PeoplePage} />
          <Route path="/app/people/:id" component={PersonPage} />
          <Route path="/app/imports" component={ImportsPage} />
          <Route path="/app/imports/:id" component={ImportPage} />
          <Route path="/app/syncs" component={SyncsPage} />
          <Route path="/app/syncs/:id" component={SyncPage} />
          <Route path="/app/signals" component={SignalsPage} />
          <Route path="/app/signals/:id" component={SignalPage} />
          <Route path="/app/models" component={ModelsPage} />
          <Route path="/app/models/:id" component={ModelPage} />
          <Route path="/app/connections" component={ConnectionsPage} />
          <Route path="/app/mcp-tokens" component={McpTokensPage} />
          <Route path="/app/settings/webhooks" component={WebhooksPage} />
          <Route path="/app/account" component={AccountPage} />
          <Route default component={UnknownPage} />
        </Router>
      </main>
    </div>
  );
}

function Home() {
  const location = useLocation();
  useEffect(() => location.route('/app/audiences', true), []);
  return null;
}

function UnknownPage() {
  return <NotFound />;
}
