// The console's frame: a skip link, the navigation, the page the path names, and the token dialog.
import { useEffect } from 'preact/hooks';
import { TokenDialog, TokenStatus } from './auth.tsx';
import { onLinkClick, route } from './router.ts';
import { RunsPage } from './runs/RunsPage.tsx';
import { RunPage } from './run/RunPage.tsx';
import { HarnessesPage } from './harnesses/HarnessesPage.tsx';

export function App() {
  const current = route.value;
  useEffect(() => {
    document.addEventListener('click', onLinkClick);
    return () => document.removeEventListener('click', onLinkClick);
  }, []);
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
          <a href="/harnesses" aria-current={current.page === 'harnesses' ? 'page' : undefined}>
            Harnesses
          </a>
        </nav>
        <TokenStatus />
      </header>
      <main id="main" tabIndex={-1}>
        {current.page === 'runs' && <RunsPage />}
        {current.page === 'run' && <RunPage key={`${current.namespace}/${current.name}`} namespace={current.namespace} name={current.name} />}
        {current.page === 'harnesses' && <HarnessesPage />}
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
