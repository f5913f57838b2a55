/**
 * What bench/context.ts and bench/context-ab.ts serve and check: an org file of N published
 * Knowledge items routed to one agent, and whether an answer to one of the tools is right.
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
