// The console's frame: a skip link, the navigation, the page the path names, and the token dialog; or, while the
// browser has no read credential, the login page alone (no page mounts, so no stream opens without one).
import { useEffect, useRef } from 'preact/hooks';
import { TokenDialog, TokenStatus } from './auth.tsx';
import { LoginPage, SessionStatus } from './Login.tsx';
import { access } from './session.ts';
import { onLinkClick, route } from './router.ts';
import { RunsPage } from './runs/RunsPage.tsx';
import { RunPage } from './run/RunPage.tsx';
import { HarnessesPage } from './harnesses/HarnessesPage.tsx';
import { EvaluationsPage } from './evaluations/EvaluationsPage.tsx';
import { EvaluationPage } from './evaluations/EvaluationPage.tsx';

export function App() {
  const a = access.value;
  if (a.status === 'checking') return <p class="checking muted">Checking access…</p>;
  if (a.status === 'out') {
    return (
      <>
        <header class="top">
          <span class="brand">tcab console</span>
        </header>
        <main id="main" tabIndex={-1} data-login="required">
          <LoginPage reason={a.reason} />
        </main>
      </>
    );
  }
  return <Console />;
}

function Console() {
  const current = route.value;
  useEffect(() => {
    document.addEventListener('click', onLinkClick);
    return () => document.removeEventListener('click', onLinkClick);
  }, []);
  // After an in-app navigation, focus moves to the new page (as a full page load would put it at the top).
  const first = useRef(true);
  const page = current.page === 'run' || current.page === 'evaluation' ? `${current.page}:${current.namespace}/${current.name}` : current.page;
  useEffect(() => {
    if (first.current) first.current = false;
    else document.getElementById('main')?.focus();
  }, [page]);
  const runsActive = current.page === 'runs' || current.page === 'run';
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">tcab console</span>
        <nav aria-label="Pages">
          <a href="/runs" aria-current={runsActive ? 'page' : undefined}>
            Runs
          </a>
          <a href="/evaluations" aria-current={current.page === 'evaluations' || current.page === 'evaluation' ? 'page' : undefined}>
            Evaluations
          </a>
          <a href="/harnesses" aria-current={current.page === 'harnesses' ? 'page' : undefined}>
            Harnesses
          </a>
        </nav>
        <SessionStatus />
        <TokenStatus />
      </header>
      <main id="main" tabIndex={-1}>
        {current.page === 'runs' && <RunsPage />}
        {current.page === 'run' && <RunPage key={`${current.namespace}/${current.name}`} namespace={current.namespace} name={current.name} />}
        {current.page === 'harnesses' && <HarnessesPage />}
        {current.page === 'evaluations' && <EvaluationsPage />}
        {current.page === 'evaluation' && <EvaluationPage key={`${current.namespace}/${current.name}`} namespace={current.namespace} name={current.name} />}
        {current.page === 'not-found' && (
          <section>
            <h1>Not found</h1>
            <p>
              No console page lives at this address. <a href="/runs">Go to the runs</a>.
            </p>
          </section>
        )}
      </main>
      <TokenDialog />
    </>
  );
}
