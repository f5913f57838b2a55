import { LOOPBACK_NAMES } from '../auth/resources.ts';
import type { Config } from '../config.ts';

/** Browser origins allowed to call the gateway: the configured list plus its own public origin. */
export function allowedOrigins(config: Config): ReadonlySet<string> {
  return new Set([new URL(config.publicUrl).origin, ...config.allowedOrigins]);
}

/** A present Origin must be allowed; server-to-server calls send none. */
export function originAllowed(origin: string | undefined, allowed: ReadonlySet<string>): boolean {
  return origin === undefined || allowed.has(origin);
}

/**
 * Guards against DNS rebinding: the Host must name this gateway's public host or a loopback
 * name (any port), never an arbitrary name that merely resolves to us.
 */
export function hostAllowed(host: string | undefined, config: Config): boolean {
  if (host === undefined) return false;
  let hostname: string;
  try {
    hostname = new URL(`http://${host}`).hostname;
  } catch {
    return false;
  }
  return LOOPBACK_NAMES.has(hostname) || hostname === new URL(config.publicUrl).hostname;
}
