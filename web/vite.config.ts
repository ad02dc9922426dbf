// Vite builds the console into static files that CMake embeds in the server binary
// (cmake/build_console.cmake); nothing is loaded from any other origin at run time.
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/',
  build: {
    assetsDir: 'assets',
    sourcemap: false,
    chunkSizeWarningLimit: 400,
    modulePreload: { polyfill: false },
  },
  server: {
    // `npm exec vite` during development: the API of a local `trainyard server --port 8080`.
    proxy: { '/v1': 'http://127.0.0.1:8080', '/metrics': 'http://127.0.0.1:8080' },
  },
});
