import { loadConfig } from '../config.ts';
import { withOps } from './session.ts';
import { print } from './terminal.ts';
import { parseCommand, requireOptions } from './usage.ts';

export const loginLinkHelp = `Usage: kgw login-link EMAIL --tenant SLUG

Prints a one-time sign-in link for a person, for the page where an MCP client asks to
connect (OAuth). Open it in the browser that shows that page. The link works once and for
15 minutes; it is built from KGW_PUBLIC_URL (of the running gateway, when one holds the data
folder). A person with a password (the org file's password_env) can sign in without one.`;

export async function loginLinkCommand(argv: readonly string[]): Promise<void> {
  const { values, positionals, help } = parseCommand(argv, { tenant: { type: 'string' } }, { min: 1, max: 1 });
  if (help) return void print(loginLinkHelp);
  const { tenant } = requireOptions(values, 'tenant');
  const email = positionals[0] ?? '';
  const link = await withOps(loadConfig(), (run) => run('oauth.login-link', { tenant, email }));
  print(link.url);
}
