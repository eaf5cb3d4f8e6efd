// esbuild bundles imported stylesheets into a separate CSS file.
declare module '*.css';
