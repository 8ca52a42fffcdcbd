/**
 * SIGTERM/SIGINT handling (controller-runtime's SetupSignalHandler): the first signal aborts the
 * returned signal (graceful shutdown); a second one exits at once with code 1.
 */
import type { Logger } from './log.js';

export function setupSignalHandler(options: { logger?: Logger; exit?: (code: number) => void } = {}): AbortSignal {
  const ctrl = new AbortController();
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let count = 0;
  const onSignal = (sig: NodeJS.Signals) => {
    count++;
    if (count === 1) {
      options.logger?.info('received signal, shutting down gracefully', { signal: sig });
      ctrl.abort(new Error(`received ${sig}`));
    } else {
      options.logger?.warn('received a second signal, exiting now', { signal: sig });
      exit(1);
    }
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return ctrl.signal;
}
