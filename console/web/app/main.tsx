import { render } from 'preact';
import { App } from './App.tsx';
import { startAccess } from './session.ts';

// First: a `#token=` login link leaves the address bar before anything else runs.
void startAccess();
render(<App />, document.getElementById('app')!);
