// The reference TypeScript client (issue 8) is not written yet: this package exports
// nothing, so nothing can depend on a client that does not exist.
export {};
