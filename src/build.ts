import type { BuildInfo } from './kernel/services.ts';
import packageJson from '../package.json' with { type: 'json' };

/** What this build is, for /healthz, the MCP server info and kgw doctor. */
export const BUILD: BuildInfo = Object.freeze({ name: 'knowledge-gateway', version: packageJson.version, node: process.version });
