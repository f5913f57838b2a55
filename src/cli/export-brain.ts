import type { OpResult } from '../admin/ops.ts';
import { BRAIN_FILE_MAX_BYTES } from '../brain/index.ts';
import { allPages, destination, diskSha, reasonOf, removeGone, sha256Of, writeWhole } from './export-files.ts';
import { byText, yamlText } from '../admin/org-file.ts';
import type { OpRunner } from './session.ts';

/**
 * The Company Brain part of `kgw export folder`: every node of every access tier and every
 * relation of the tenant, whoever keeps it, as `brain/brain.yaml`, which `kgw brain import`
 * takes back (docs/migration.md). YAML rather than JSON, though the import reads both the same
 * way: it is the org file's `brain:` section word for word (so a person can move nodes into an
 * org file), and it can say in comments what it leaves out and how to import it. Every value is
 * written as a JSON string or number, which YAML reads back exactly: text that looks like a
 * number, a date or `true` stays text, and no character needs YAML's own rules.
 *
 * Nodes are in id order and relations in order of their ends as written (a person's email, not
 * their id in this gateway), so that exporting the same brain from another gateway gives the
 * same bytes. A tenant without nodes and relations gets no file (an earlier one is removed).
 */

/** Where the brain goes, from the export's root. */
export const BRAIN_FILE = 'brain/brain.yaml';

type Node = OpResult<'brain.nodes'>['nodes'][number];
type Relation = OpResult<'brain.relations'>['relations'][number];

/** The brain in the manifest: the file written, its SHA-256, and how much it holds. */
export interface ManifestBrain {
  readonly path: string;
  readonly sha256: string;
  readonly nodes: number;
  readonly relations: number;
}

export interface BrainReport {
  /** The file written, or null when the tenant has no brain. */
  path: string | null;
  nodes: number;
  relations: number;
  written: number;
  unchanged: number;
  removed: number;
  /** Larger than `kgw brain import` reads (BRAIN_FILE_MAX_BYTES): written, but it must be split to be imported. */
  too_large: boolean;
  /** Relations whose end names nothing now (kept in the store, out of the graph), which the file cannot carry. */
  left_out: { relation: string; reason: string }[];
  kept: { path: string; reason: string }[];
  failed: { path: string; reason: string }[];
}

/** A stored instant as the file writes it: the day alone when it is midnight UTC (as people write it), else the instant. */
function instant(iso: string): string {
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso;
}

function nodeLines(node: Node): string[] {
  const lines = [`  - id: ${yamlText(node.id)}`, `    type: ${yamlText(node.type)}`, `    title: ${yamlText(node.title)}`];
  if (node.summary !== '') lines.push(`    summary: ${yamlText(node.summary)}`);
  lines.push(`    access: ${yamlText(node.access)}`);
  if (node.department !== null) lines.push(`    department: ${yamlText(node.department)}`);
  if (node.project !== null) lines.push(`    project: ${yamlText(node.project)}`);
  const metadata = Object.entries(node.metadata);
  if (metadata.length > 0) {
    lines.push('    metadata:');
    for (const [key, value] of metadata) lines.push(`      ${yamlText(key)}: ${typeof value === 'number' ? JSON.stringify(value) : yamlText(String(value))}`);
  }
  if (node.tags.length > 0) lines.push(`    tags: [${node.tags.map(yamlText).join(', ')}]`);
  if (node.verified_at !== null || node.review_by !== null) {
    lines.push('    freshness:');
    if (node.verified_at !== null) lines.push(`      verified: ${yamlText(instant(node.verified_at))}`);
    if (node.review_by !== null) lines.push(`      review_by: ${yamlText(instant(node.review_by))}`);
  }
  if (node.mark !== null) lines.push(`    mark: ${yamlText(node.mark)}`);
  return lines;
}

const relationLine = (r: Relation): string =>
  `  - { from: ${yamlText(r.from)}, verb: ${yamlText(r.verb)}, to: ${yamlText(r.to)}${r.mark === null ? '' : `, mark: ${yamlText(r.mark)}`} }`;

/** The file's text: a header, what it leaves out, then `nodes:` and `relations:`. */
function brainText(tenant: string, nodes: readonly Node[], relations: readonly Relation[], leftOut: BrainReport['left_out']): string {
  const lines = [
    `# The Company Brain of tenant ${yamlText(tenant)}, written by kgw export folder: every node of every`,
    '# access tier and every relation. Its relations name people by email and agents, departments',
    '# and projects by name, so apply ../org.yaml first; then, from the export folder:',
    `#   kgw brain import brain/brain.yaml --tenant ${tenant}`,
  ];
  if (leftOut.length > 0) {
    lines.push('# Left out, as a relation whose end names nothing would make kgw brain import refuse the file:');
    for (const item of leftOut) lines.push(`#   ${yamlText(item.relation)}: ${yamlText(item.reason)}`);
  }
  lines.push(nodes.length === 0 ? 'nodes: []' : 'nodes:', ...nodes.flatMap(nodeLines));
  lines.push(relations.length === 0 ? 'relations: []' : 'relations:', ...relations.map(relationLine));
  return `${lines.join('\n')}\n`;
}

/**
 * Writes the tenant's brain to `root`/BRAIN_FILE, unless the disk holds those bytes already;
 * with no brain, removes the file an earlier export wrote (`before`) unless it was changed on
 * disk since. Returns the manifest's entry (null without a file) and what was done.
 */
export async function exportBrain(
  run: OpRunner,
  tenant: string,
  root: string,
  before: ManifestBrain | null | undefined,
  progress: (line: string) => void,
): Promise<{ entry: ManifestBrain | null; report: BrainReport }> {
  const report: BrainReport = {
    path: null,
    nodes: 0,
    relations: 0,
    written: 0,
    unchanged: 0,
    removed: 0,
    too_large: false,
    left_out: [],
    kept: [],
    failed: [],
  };
  const nodes = await allPages(async (after) => {
    const page = await run('brain.nodes', { tenant, ...(after === undefined ? {} : { after }) });
    return { items: page.nodes, next: page.next };
  });
  progress(`brain: ${nodes.length} nodes`);
  const all = await allPages(async (after) => {
    const page = await run('brain.relations', { tenant, ...(after === undefined ? {} : { after }) });
    return { items: page.relations, next: page.next };
  });
  const relations = all.filter((r) => r.unresolved === null);
  for (const r of all) if (r.unresolved !== null) report.left_out.push({ relation: `${r.from} ${r.verb} ${r.to}`, reason: r.unresolved });
  // Ids and ends as written are the same in every gateway; the store's order is not (a person's id differs).
  nodes.sort((a, b) => byText(a.id, b.id));
  relations.sort((a, b) => byText(a.from, b.from) || byText(a.verb, b.verb) || byText(a.to, b.to));
  report.left_out.sort((a, b) => byText(a.relation, b.relation));
  report.nodes = nodes.length;
  report.relations = relations.length;
  if (nodes.length === 0 && relations.length === 0) {
    await removeGone(root, before ? [before] : [], new Set(), report);
    return { entry: null, report };
  }
  const bytes = Buffer.from(brainText(tenant, nodes, relations, report.left_out), 'utf8');
  const sha256 = sha256Of(bytes);
  report.path = BRAIN_FILE;
  report.too_large = bytes.length > BRAIN_FILE_MAX_BYTES;
  try {
    const target = destination(root, BRAIN_FILE);
    if ((await diskSha(target)) === sha256) report.unchanged += 1;
    else {
      await writeWhole(target, bytes);
      report.written += 1;
    }
  } catch (error) {
    report.failed.push({ path: BRAIN_FILE, reason: reasonOf(error) });
    return { entry: before ?? null, report };
  }
  return { entry: { path: BRAIN_FILE, sha256, nodes: nodes.length, relations: relations.length }, report };
}

/** The brain entry of an earlier export's manifest (undefined when it has none, as before brains were exported). */
export function earlierBrain(manifest: unknown): ManifestBrain | null | undefined {
  const brain = typeof manifest === 'object' && manifest !== null ? (manifest as { brain?: unknown }).brain : undefined;
  if (brain === null) return null;
  if (typeof brain !== 'object' || brain === undefined) return undefined;
  const { path: file, sha256 } = brain as Partial<ManifestBrain>;
  return typeof file === 'string' && typeof sha256 === 'string' ? (brain as ManifestBrain) : undefined;
}
