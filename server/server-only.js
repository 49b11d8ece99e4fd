// What `import "#server-only"` loads everywhere but a browser bundle (package.json "imports"):
// nothing. A browser bundle gets the `server-only` package instead, and Next's build fails
// (decision 0164).
export {};
