/**
 * What bench/context.ts and bench/context-ab.ts share: an org file of N published Knowledge
 * items routed to one agent, whether an answer to one of the tools is right, and how their
 * settings are read from the environment.
 */

export const TOOLS = ['get_current_context', 'list_knowledge', 'list_skills', 'list_memories'] as const;
export type Tool = (typeof TOOLS)[number];

/** The org file: N published Knowledge items of about 300 characters, each routed to the agent `bot`. */
export function orgFile(n: number): string {
  const lines = [
    'tenant: acme',
    'name: Acme',
    'people:',
    '  - email: alice@acme.test',
    '    name: Alice',
    'agents:',
    '  - name: bot',
    '    owner: alice@acme.test',
  ];
  lines.push('knowledge:');
  for (let i = 0; i < n; i++)
    lines.push(
      `  - title: Item ${i}`,
      '    content: |',
      `      Knowledge number ${i}. ${'Some words about the topic. '.repeat(8).trim()}`,
      '    publish: true',
    );
  lines.push('grants:', '  - { to: bot, on: all_knowledge, role: viewer }', 'routes:');
  for (let i = 0; i < n; i++) lines.push(`  - { deliver: "knowledge:Item ${i}", to: bot }`);
  return `${lines.join('\n')}\n`;
}

/** Why an answer is wrong for `tool` at size n, or undefined. */
export function check(tool: Tool, n: number, status: number, body: string): string | undefined {
  if (status !== 200) return `status ${status}: ${body.slice(0, 200)}`;
  const answer = JSON.parse(body) as { result?: { isError?: boolean; content?: { text?: string }[]; structuredContent?: { knowledge?: unknown[] } } };
  if (answer.result === undefined || answer.result.isError === true) return `not a result: ${body.slice(0, 200)}`;
  if (tool === 'list_knowledge' && answer.result.structuredContent?.knowledge?.length !== n) return `expected ${n} items`;
  if (tool === 'get_current_context') {
    const text = answer.result.content?.[0]?.text ?? '';
    const delivered = text.split('<alignbase_knowledge ').length - 1;
    if (delivered !== n) return `expected ${n} Knowledge delivered, found ${delivered}`;
  }
  return undefined;
}

/** Whole numbers from 1 to `max`, comma-separated, from the environment variable `name`. */
export function positiveList(name: string, fallback: readonly number[], max = 20_000): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return [...fallback];
  const values = raw.split(',').map((part) => Number(part.trim()));
  if (values.some((value) => !Number.isInteger(value) || value <= 0 || value > max))
    throw new Error(`${name} must be whole numbers from 1 to ${max}, got "${raw}"`);
  return values;
}

/** BENCH_CONTEXT_TOOLS: the tools to time (e.g. one, to profile it), `fallback` when unset. */
export function toolsFromEnvironment(fallback: readonly Tool[]): Tool[] {
  return (process.env.BENCH_CONTEXT_TOOLS || fallback.join(',')).split(',').map((name) => {
    const tool = TOOLS.find((known) => known === name.trim());
    if (tool === undefined) throw new Error(`BENCH_CONTEXT_TOOLS names ${TOOLS.join(', ')}, got "${name}"`);
    return tool;
  });
}
