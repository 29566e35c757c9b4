/** Waits for SIGINT or SIGTERM. */
export interface SignalWait {
  /** Resolves with the name of the first signal. */
  signalled: Promise<NodeJS.Signals>;
  /** Removes the listeners; call it once the command has finished closing. */
  dispose(): void;
}

/**
 * Listens for SIGINT/SIGTERM until disposed. The listeners stay while the
 * command closes: signal-exit (under proper-lockfile) re-raises a signal
 * that nobody else listens for, which would kill the process half-closed.
 */
export function waitForSignal(): SignalWait {
  let resolve!: (signal: NodeJS.Signals) => void;
  const signalled = new Promise<NodeJS.Signals>((r) => (resolve = r));
  const on = (signal: NodeJS.Signals) => resolve(signal);
  process.on('SIGINT', on);
  process.on('SIGTERM', on);
  return {
    signalled,
    dispose() {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
    },
  };
}
