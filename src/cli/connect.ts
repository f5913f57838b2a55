import { BUILD } from '../build.ts';
import { loadConfig } from '../config.ts';
import { mcpEndpoints } from '../products.ts';
import type { Endpoint } from '../mcp/registry.ts';
import { CLIENT_SNIPPETS, CONNECT_CLIENTS, isConnectClient } from './connect-snippets.ts';
import { withOps } from './session.ts';
import { print, printNotice } from './terminal.ts';
import { UsageError, parseCommand, requireOptions } from './usage.ts';

/** A server name a client's configuration can hold: letters, digits, `-`, `_`, at most 64. */
const SERVER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export const connectHelp = `Usage: kgw connect CLIENT --tenant SLUG --principal NAME_OR_EMAIL [--endpoint ENDPOINT]
                   [--scopes "SCOPE ..."] [--ttl DURATION] [--name NAME]

Prints what CLIENT needs to reach this gateway, with a fresh bearer token for an agent (by
name) or a person (by email). The token is shown only here and is stored hashed; list and
revoke it with "kgw token". Standard output holds only the snippet; what was issued, and where
the snippet goes, is said on standard error.

Clients:
${CONNECT_CLIENTS.map((client) => `  ${client.padEnd(16)}${CLIENT_SNIPPETS[client].summary}`).join('\n')}

Options:
  --endpoint  mcp (every tool; the default), alignbase, atmina, brain, or the endpoint's path
  --scopes    the token's scopes; default: those the endpoint asks a client for
  --ttl       e.g. 30m, 12h, 90d, 1w, or never (default 90d)
  --name      the server's name in the client's configuration (default kgw)

The URL is KGW_PUBLIC_URL's. Clients that sign in with OAuth need no token: give them the
endpoint's URL (docs/oauth.md).`;

/** The endpoint named by its path or by its last product segment (`atmina` for /atmina/mcp, `mcp` for /mcp). */
function endpointNamed(endpoints: readonly Endpoint[], name: string): Endpoint {
  const wanted = name.startsWith('/') ? name : name === 'mcp' ? '/mcp' : `/${name}/mcp`;
  const endpoint = endpoints.find((candidate) => candidate.path === wanted);
  if (endpoint === undefined) {
    const names = endpoints.map((candidate) => (candidate.path === '/mcp' ? 'mcp' : candidate.path.split('/')[1]));
    throw new UsageError(`unknown endpoint "${name}"; use one of ${names.join(', ')}`);
  }
  return endpoint;
}

export async function connectCommand(argv: readonly string[]): Promise<void> {
  const { values, positionals, help } = parseCommand(
    argv,
    {
      tenant: { type: 'string' },
      principal: { type: 'string' },
      endpoint: { type: 'string' },
      scopes: { type: 'string' },
      ttl: { type: 'string' },
      name: { type: 'string' },
    },
    { min: 0, max: 1 },
  );
  if (help) return void print(connectHelp);
  const client = positionals[0];
  if (client === undefined) throw new UsageError(`name the client: ${CONNECT_CLIENTS.join(', ')}`);
  if (!isConnectClient(client)) throw new UsageError(`unknown client "${client}"; use one of ${CONNECT_CLIENTS.join(', ')}`);
  const { tenant, principal } = requireOptions(values, 'tenant', 'principal');
  const name = values.name ?? 'kgw';
  if (!SERVER_NAME.test(name)) throw new UsageError('--name must be 1 to 64 letters, digits, hyphens or underscores');
  const config = loadConfig();
  const endpoint = endpointNamed(mcpEndpoints(BUILD.version), values.endpoint ?? 'mcp');
  const scopes = values.scopes ?? endpoint.defaultScopes.join(' ');
  const url = `${config.publicUrl}${endpoint.path}`;
  const created = await withOps(config, (run) => run('token.create', { tenant, principal, scopes, ttl: values.ttl, label: `kgw connect ${client}` }));
  const snippet = CLIENT_SNIPPETS[client];
  print(snippet.render({ name, url, token: created.token }).replace(/\n$/, ''));
  printNotice(
    `kgw: a token for ${created.info.principal} in ${created.info.tenant} (${created.info.scopes.join(' ')}), ` +
      `${created.info.expiresAt === null ? 'never expiring' : `valid until ${created.info.expiresAt}`}, id ${created.info.id}, for ${url}; ${snippet.where}`,
  );
}
