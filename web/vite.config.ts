import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The signer's page (issue 9), the public verification page (issue 27) and the senders' prepare page
 * (issue 40). Built into dist/web and served by the API server from the same origin
 * (src/http/routes/signer-page.ts): `/web/assets/*` carry content hashes and are cached for a year.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/web/',
  publicDir: false,
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    // Three pages sharing their styles and helpers: the signer's (index.html), the public
    // verification page (verify.html, issue 27, served at /verify) and the senders' prepare page
    // (prepare.html, issue 40, served at /prepare).
    rollupOptions: {
      input: {
        index: fileURLToPath(new URL('index.html', import.meta.url)),
        verify: fileURLToPath(new URL('verify.html', import.meta.url)),
        // The share link's few-word pages, framed by an embedding site, tell it why (signer-page.ts).
        'link-events': fileURLToPath(new URL('src/link-events.ts', import.meta.url)),
        prepare: fileURLToPath(new URL('prepare.html', import.meta.url)),
      },
      // What two pages share is one chunk: the signer page keeps loading its script and this chunk
      // only, not a third file for what it shares with the prepare page alone (issue 25: the first
      // page on a slow phone). The verification page loads that little more (the API client).
      output: {
        codeSplitting: {
          groups: [{ name: 'chrome', test: /\/web\/src\/|modulepreload-polyfill/, minShareCount: 2 }],
        },
      },
    },
    assetsDir: 'assets',
    // Assets are always files: the page's Content-Security-Policy allows no data: URLs for scripts or fonts.
    assetsInlineLimit: 0,
    sourcemap: false,
    target: 'es2022',
    chunkSizeWarningLimit: 2048,
    reportCompressedSize: false,
  },
  server: { fs: { allow: ['..'] } },
});
