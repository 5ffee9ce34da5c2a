// Preloaded into every process a test spawns (processes.ts): when the test process is gone
// (its end of our stdin closes, also after a SIGKILL), stop as on SIGTERM, then for good.
process.stdin.on('close', () => {
  setTimeout(() => process.exit(1), 10_000).unref();
  process.kill(process.pid, 'SIGTERM');
});
process.stdin.on('error', () => undefined);
process.stdin.resume();
// Reading stdin must not keep a process alive that would otherwise exit.
process.stdin.unref?.();
