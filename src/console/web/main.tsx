// The web console's entry: bundled by scripts/build-console.mjs into dist/console/app.js.
import { render } from 'preact';
import { App } from './app';

const root = document.getElementById('app');
if (root) render(<App />, root);
