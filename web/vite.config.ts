import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The web interface (docs/architecture.md): Preact, built to dist/web and served by the API at /app/.
 * `npm run web:dev` serves it with hot reload on :5173 and passes API calls to the service on :3000.
 */
const api = process.env.API_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/app/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // No inline script or style anywhere: the page's policy allows files from its own origin only.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
  server: {
    proxy: { '/api': api, '/oauth': api, '/app/session': api },
  },
});
