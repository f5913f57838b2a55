#!/usr/bin/env node
import { ConfigError } from '../config.ts';
import { isKgwError } from '../core/errors.ts';
import { applyCommand, applyHelp } from './apply.ts';
import { doctorCommand, doctorHelp } from './doctor.ts';
import { migrateCommand, migrateHelp } from './migrate.ts';
import { serveCommand, serveHelp } from './serve.ts';
import { tokenCommand, tokenHelp } from './token.ts';
import { UsageError } from './usage.ts';

const commands: Record<string, { run: (argv: readonly string[]) => Promise<void>; help: string; summary: string }> = {
  serve: { run: serveCommand, help: serveHelp, summary: 'run the gateway' },
  migrate: { run: migrateCommand, help: migrateHelp, summary: 'apply database migrations' },
  apply: { run: applyCommand, help: applyHelp, summary: 'apply a declarative org file (YAML)' },
  token: { run: tokenCommand, help: tokenHelp, summary: 'create, list and revoke bearer tokens' },
  doctor: { run: doctorCommand, help: doctorHelp, summary: 'check the configuration and every backend' },
};

const mainHelp = `Usage: kgw COMMAND [options]

Knowledge Gateway: one MCP server for Alignbase, Atmina and Company Brain clients.

Commands:
${Object.entries(commands)
  .map(([name, c]) => `  ${name.padEnd(9)}${c.summary}`)
  .join('\n')}

Run "kgw COMMAND --help" for a command's options. Configuration comes from environment
variables (KGW_*, DATABASE_URL, S3_*, MEILI_*, NEO4J_*); see the README.`;

async function main(argv: readonly string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' && rest[0] !== undefined ? commands[rest[0]] : undefined;
    if (topic) return void console.log(topic.help);
    return void console.log(mainHelp);
  }
  if (name === '--version' || name === '-v') {
    const { BUILD } = await import('../app.ts');
    return void console.log(BUILD.version);
  }
  const command = commands[name];
  if (!command) throw new UsageError(`unknown command "${name}"; run "kgw --help"`);
  await command.run(rest);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) {
    console.error(`kgw: ${error.message} (see "kgw ${process.argv[2] ?? ''} --help")`);
    process.exitCode = 2;
  } else if (error instanceof ConfigError || isKgwError(error) || error instanceof Error) {
    console.error(`kgw: ${error.message}`);
    process.exitCode = 1;
  } else {
    console.error(`kgw: ${String(error)}`);
    process.exitCode = 1;
  }
});
