import { loadConfig } from '../config.ts';
import type { TokenInfo } from '../kernel/tokens/tokens.ts';
import { withOps } from './session.ts';
import { jsonText, print } from './terminal.ts';
import { UsageError, parseCommand, requireOptions, table } from './usage.ts';

export const tokenHelp = `Usage:
  kgw token create --tenant SLUG --principal NAME_OR_EMAIL --scopes "SCOPE ..." [--ttl DURATION] [--label TEXT]
  kgw token list [--tenant SLUG] [--all] [--json]
  kgw token revoke TOKEN_ID

create   issues a bearer token for a person (by email) or an agent (by name) and prints only
         the token; it is stored hashed and cannot be shown again. Scopes: context.read,
         context.write, activity.write, brain:read, brain:propose, outreach:propose
         (context.write implies context.read; documents.read/.write are aliases).
         --ttl: e.g. 30m, 12h, 90d, 1w, or never (default 90d).
list     shows tokens (not their secrets), newest first; --all includes revoked ones.
revoke   revokes a token by its id at once.`;

function status(token: TokenInfo): string {
  if (token.revokedAt !== null) return 'revoked';
  if (token.expiresAt !== null && Date.parse(token.expiresAt) <= Date.now()) return 'expired';
  return 'active';
}

export async function tokenCommand(argv: readonly string[]): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h') return void print(tokenHelp);
  switch (sub) {
    case 'create': {
      const { values, help } = parseCommand(
        rest,
        { tenant: { type: 'string' }, principal: { type: 'string' }, scopes: { type: 'string' }, ttl: { type: 'string' }, label: { type: 'string' } },
        { min: 0, max: 0 },
      );
      if (help) return void print(tokenHelp);
      const { tenant, principal, scopes } = requireOptions(values, 'tenant', 'principal', 'scopes');
      const created = await withOps(loadConfig(), (run) => run('token.create', { tenant, principal, scopes, ttl: values.ttl, label: values.label }));
      print(created.token);
      return;
    }
    case 'list': {
      const { values, help } = parseCommand(rest, { tenant: { type: 'string' }, all: { type: 'boolean' }, json: { type: 'boolean' } }, { min: 0, max: 0 });
      if (help) return void print(tokenHelp);
      const tokens = await withOps(loadConfig(), (run) => run('token.list', { tenant: values.tenant, all: values.all === true }));
      if (values.json === true) return void print(jsonText(tokens));
      if (tokens.length === 0) return void print('no tokens');
      print(
        table(
          ['ID', 'TENANT', 'PRINCIPAL', 'SCOPES', 'EXPIRES', 'STATUS', 'LABEL'],
          tokens.map((t) => [t.id, t.tenant, t.principal, t.scopes.join(' '), t.expiresAt ?? 'never', status(t), t.label ?? '']),
        ),
      );
      return;
    }
    case 'revoke': {
      const { positionals, help } = parseCommand(rest, {}, { min: 1, max: 1 });
      if (help) return void print(tokenHelp);
      const id = positionals[0] ?? '';
      const token = await withOps(loadConfig(), (run) => run('token.revoke', { id }));
      print(`revoked ${token.id} (${token.principal} in ${token.tenant})`);
      return;
    }
    default:
      throw new UsageError(`unknown token command "${sub}"; use create, list or revoke`);
  }
}
