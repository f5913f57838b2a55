#!/usr/bin/env node
import { enableCompileCache } from 'node:module';
import { ConfigError } from '../config.ts';
import { isKgwError } from '../kernel/errors.ts';
import { print, printError } from './terminal.ts';
import { UsageError } from './usage.ts';

interface Command {
  readonly summary: string;
  /** Loaded on use, so `kgw --help` does not load the whole gateway. */
  load(): Promise<{ run: (argv: readonly string[]) => Promise<void>; help: string }>;
}

const commands: Record<string, Command> = {
  serve: { summary: 'run the gateway', load: async () => import('./serve.ts').then((m) => ({ run: m.serveCommand, help: m.serveHelp })) },
  migrate: { summary: 'apply database migrations', load: async () => import('./migrate.ts').then((m) => ({ run: m.migrateCommand, help: m.migrateHelp })) },
  apply: { summary: 'apply a declarative org file (YAML)', load: async () => import('./apply.ts').then((m) => ({ run: m.applyCommand, help: m.applyHelp })) },
  brain: {
    summary: 'import Company Brain knowledge (nodes and relations)',
    load: async () => import('./brain.ts').then((m) => ({ run: m.brainCommand, help: m.brainHelp })),
  },
  import: {
    summary: 'bring in a folder or vault, Skill packages, a memory-server graph, an MCP endpoint or an export',
    load: async () => import('./import.ts').then((m) => ({ run: m.importCommand, help: m.importHelp })),
  },
  export: {
    summary: "write a tenant's Knowledge Bases and Alignbase content to a folder, with every version, or to another MCP endpoint",
    load: async () => import('./export.ts').then((m) => ({ run: m.exportCommand, help: m.exportHelp })),
  },
  token: { summary: 'create, list and revoke bearer tokens', load: async () => import('./token.ts').then((m) => ({ run: m.tokenCommand, help: m.tokenHelp })) },
  connect: {
    summary: "print a client's configuration (Claude Code, Cursor, VS Code, …) with a fresh token",
    load: async () => import('./connect.ts').then((m) => ({ run: m.connectCommand, help: m.connectHelp })),
  },
  review: {
    summary: "list, show, accept and reject agents' drafts and proposals",
    load: async () => import('./review.ts').then((m) => ({ run: m.reviewCommand, help: m.reviewHelp })),
  },
  inbox: {
    summary: 'list the messages agents sent to an agent',
    load: async () => import('./inbox.ts').then((m) => ({ run: m.inboxCommand, help: m.inboxHelp })),
  },
  activity: {
    summary: 'list Alignbase Activity installations and events; switch Activity',
    load: async () => import('./activity.ts').then((m) => ({ run: m.activityCommand, help: m.activityHelp })),
  },
  'login-link': {
    summary: 'print a one-time sign-in link for a person',
    load: async () => import('./login-link.ts').then((m) => ({ run: m.loginLinkCommand, help: m.loginLinkHelp })),
  },
  doctor: {
    summary: 'check the configuration and every backend',
    load: async () => import('./doctor.ts').then((m) => ({ run: m.doctorCommand, help: m.doctorHelp })),
  },
  kb: {
    summary: 'list, show and restore Atmina Knowledge Bases',
    load: async () => import('./kb.ts').then((m) => ({ run: m.kbCommand, help: m.kbHelp })),
  },
  files: {
    summary: 'write a Knowledge Base file’s bytes to stdout or a file',
    load: async () => import('./kb.ts').then((m) => ({ run: m.filesCommand, help: m.filesHelp })),
  },
  reindex: {
    summary: 'rebuild search and graph projections from the store',
    load: async () => import('./reindex.ts').then((m) => ({ run: m.reindexCommand, help: m.reindexHelp })),
  },
};

const mainHelp = `Usage: kgw COMMAND [options]

Knowledge Gateway: one MCP server for Alignbase, Atmina and Company Brain clients.

Commands:
${Object.entries(commands)
  .map(([name, c]) => `  ${name.padEnd(12)}${c.summary}`)
  .join('\n')}

Run "kgw COMMAND --help" for a command's options, "kgw version" for the version. Configuration comes from environment
variables (KGW_*, DATABASE_URL, S3_*, MEILI_*, NEO4J_*); see the README.`;

async function main(argv: readonly string[]): Promise<void> {
  const [name, ...rest] = argv;
  // No command is a mistake (a script that lost its arguments must not pass): the overview on
  // standard error, exit 2.
  if (name === undefined) {
    printError(mainHelp);
    process.exitCode = 2;
    return;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' && rest[0] !== undefined ? commands[rest[0]] : undefined;
    if (topic) return void print((await topic.load()).help);
    return void print(mainHelp);
  }
  if (name === '--version' || name === '-v' || name === 'version') {
    const { BUILD } = await import('../build.ts');
    return void print(BUILD.version);
  }
  const command = commands[name];
  if (!command) throw new UsageError(`unknown command "${name}"; run "kgw --help"`);
  await (await command.load()).run(rest);
}

// Node keeps the compiled code of the modules a command loads (in its folder of the OS's
// temporary folder, or NODE_COMPILE_CACHE), so every later command starts a third sooner;
// NODE_DISABLE_COMPILE_CACHE=1 turns it off. Called before a command's modules are loaded.
enableCompileCache();

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) {
    const command = process.argv[2];
    // A known command's usage is worth pointing at; an unknown command's is not.
    const hint = command !== undefined && Object.hasOwn(commands, command) ? ` (see "kgw ${command} --help")` : '';
    printError(`kgw: ${error.message}${hint}`);
    process.exitCode = 2;
  } else if (error instanceof ConfigError || isKgwError(error) || error instanceof Error) {
    printError(`kgw: ${error.message}`);
    process.exitCode = 1;
  } else {
    printError(`kgw: ${String(error)}`);
    process.exitCode = 1;
  }
});
