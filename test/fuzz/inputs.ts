import fc from 'fast-check';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { createHash } from 'node:crypto';
import type { KbEntry, KbFileEntry, Pools, TenantPool, Versioned } from './harness.ts';
import { skillMd } from './harness.ts';
import { pngOf, textPdf } from '../atmina/assets/fixtures.ts';
import { hostileNumber, hostileString, withMutations, withOneHostileValue, wrongType } from './hostile.ts';
import type { SchemaObject, SchemaPosition } from './schema-arbitrary.ts';
import { arbitraryFromSchema, unsupportedKeywords } from './schema-arbitrary.ts';

/*
 * Arguments for any listed tool: the generic JSON Schema generator, with real ids and names of
 * both tenants mixed in by property name (so calls get past "not found" into the deep code
 * paths), hostile strings and numbers everywhere, wrong types, and mutations of the whole
 * object. Nothing here names a tool: a tool added later gets the same treatment from its schema.
 */

function pick<T>(values: readonly T[]): fc.Arbitrary<T> | undefined {
  return values.length === 0 ? undefined : fc.constantFrom(...values);
}

/** The present arbitraries with their weights; undefined when none is present. */
function weighted(...choices: [fc.Arbitrary<unknown> | undefined, number][]): fc.Arbitrary<unknown> | undefined {
  const present = choices.filter((c): c is [fc.Arbitrary<unknown>, number] => c[0] !== undefined).map(([arbitrary, weight]) => ({ arbitrary, weight }));
  return present.length === 0 ? undefined : fc.oneof(...present);
}

const ids = (resources: readonly Versioned[]): string[] => resources.map((r) => r.id);
const resourcesOf = (pool: TenantPool): Versioned[] => [...pool.knowledge, ...pool.skills, ...pool.memories, ...pool.artifacts];

const today = (days: number): string => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

const liveFiles = (pool: TenantPool): KbFileEntry[] => pool.kbFiles.filter((file) => !file.deleted);
/** A KB as a caller names it: by id, or by slug. */
const kbNames = (kbs: readonly KbEntry[]): string[] => kbs.flatMap((kb) => [kb.id, kb.slug]);

/** Bytes a file upload may carry: an image, a PDF, Markdown, and bytes of no known kind. */
const UPLOADS = [pngOf(8, 8), pngOf(20, 10, () => [0, 160, 60]), textPdf([['Fuzzed page']]), Buffer.from('# Uploaded\n', 'utf8'), Buffer.from([0, 1, 2, 255])];
const UPLOADS_BASE64 = UPLOADS.map((bytes) => bytes.toString('base64'));
const UPLOADS_SHA256 = UPLOADS.map((bytes) => createHash('sha256').update(bytes).digest('hex'));

/** Text the seeded KB files hold, so patches find what they look for (harness.ts, `#seedKbs`). */
const SEEDED_TEXT = ['Version two.', 'Version four.', '# Handbook', '## Purpose', 'Ask the docs team.', 'policy', 'Run it.', '\n', '---'];

/** Mostly the own tenant's ids of the right kind, sometimes the other tenant's, sometimes the own tenant's of another kind. */
function idsOf(own: readonly string[], other: readonly string[], elsewhere: readonly string[]): fc.Arbitrary<unknown> | undefined {
  return weighted([pick(own), 8], [pick(other), 2], [pick(elsewhere), 1]);
}

/** Real values for a property, by its name and where it sits; undefined when the name means nothing known. */
export function realValues(pools: Pools, position: SchemaPosition): fc.Arbitrary<unknown> | undefined {
  const key = position.key ?? '';
  const inside = (name: string) => position.path.includes(name);
  const { own, other } = pools;
  const ownResources = resourcesOf(own);
  const versions = (list: readonly Versioned[]) => list.flatMap((r) => [r.latest, r.latest + 1, r.latest - 1]);
  switch (key) {
    case 'knowledge_id':
      return idsOf(ids(own.knowledge), ids(other.knowledge), ids(ownResources));
    case 'skill_id':
      return idsOf(ids(own.skills), ids(other.skills), ids(ownResources));
    case 'memory_id':
      return idsOf(ids(own.memories), ids(other.memories), ids(ownResources));
    case 'artifact_id':
      return idsOf(ids(own.artifacts), ids(other.artifacts), ids(ownResources));
    case 'context_id':
      return idsOf(ids(ownResources), ids(resourcesOf(other)), []);
    case 'draft_id':
      return weighted(
        [pick(own.knowledgeDrafts), 4],
        [pick(own.skillDrafts), 4],
        [pick(own.proposals), 1],
        [pick([...other.knowledgeDrafts, ...other.skillDrafts]), 2],
        [pick(ids(ownResources)), 1],
      );
    case 'local_installation_id':
      return weighted([pick(own.installations), 8], [pick(other.installations), 2], [fc.uuid({ version: 4 }), 1]);
    case 'session_id':
      return weighted([pick(own.sessions), 4], [pick(other.sessions), 1], [fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/), 4]);
    case 'id':
      if (inside('recipients')) return idsOf([...own.agents, ...own.groups], [...other.agents, ...other.groups], own.people);
      return idsOf(ids(ownResources), ids(resourcesOf(other)), own.agents);
    case 'type':
      if (inside('recipients')) return weighted([fc.constantFrom('agent', 'group'), 8], [fc.constantFrom('person', 'Agent', 'team'), 1]);
      return undefined;
    case 'context_type':
      return weighted([fc.constantFrom('knowledge', 'skill', 'artifact'), 8], [fc.constantFrom('memory', 'Knowledge', 'skills'), 1]);
    case 'access':
      return weighted([fc.constantFrom('viewer', 'editor'), 8], [fc.constantFrom('owner', 'publisher'), 1]);
    case 'version':
      return weighted(
        [fc.constantFrom<unknown>('latest', 'published', 1, 2), 6],
        [pick(versions(ownResources)), 3],
        [pick(own.kbFiles.flatMap((file) => [file.latest, file.latest + 1])), 2],
        [fc.constantFrom('1', 'Latest', 0), 1],
      );
    case 'expected_version':
    case 'base_version':
      return weighted([fc.constantFrom(0, 1, 2), 4], [pick(versions(ownResources)), 4]);
    case 'offset':
      return fc.constantFrom(0, 0, 1, 20, 262_144, 262_143, 270_000, 300_000, 299_999);
    case 'path':
      return weighted(
        [pick([...own.attachmentPaths, ...other.attachmentPaths]), 4],
        [pick(own.kbFiles.map((file) => file.path)), 6],
        [pick(other.kbFiles.map((file) => file.path)), 1],
        [fc.constant('SKILL.md'), 1],
        [fc.stringMatching(/^(notes|guides|images)\/[a-z0-9]{1,8}\.(md|txt|png|json)$/), 2],
      );
    case 'to_path':
    case 'filename':
      return weighted(
        [pick(liveFiles(own).map((file) => file.path)), 3],
        [fc.stringMatching(/^(moved|uploads|guides)\/[a-z0-9 é]{1,8}\.(md|txt|png|pdf|bin)$/), 5],
      );
    case 'path_prefix':
    case 'folder':
      return fc.constantFrom('', 'guides', 'guides/', 'gu', 'images/', 'uploads', 'nowhere/', 'README.md');
    case 'kb_id':
      return weighted(
        [pick(kbNames(own.kbs.filter((kb) => !kb.archived))), 12],
        [pick(kbNames(own.kbs.filter((kb) => kb.archived))), 1],
        [pick(kbNames(other.kbs)), 2],
        [pick(ids(ownResources)), 1],
      );
    case 'file_id':
      return weighted(
        [pick(liveFiles(own).map((file) => file.id)), 8],
        [pick(own.kbFiles.filter((file) => file.deleted).map((file) => file.id)), 1],
        [pick(other.kbFiles.map((file) => file.id)), 2],
        [pick(own.kbs.map((kb) => kb.id)), 1],
      );
    case 'if_match':
    case 'sha256':
    case 'content_sha256':
      return weighted(
        [pick(liveFiles(own).map((file) => file.sha256)), 6],
        [pick(own.etags), 2],
        [pick(UPLOADS_SHA256), 2],
        [pick(other.etags), 1],
        [fc.stringMatching(/^[0-9a-f]{64}$/), 1],
      );
    case 'confirm':
      // Only what the fuzzing may delete: the KBs and files the seeding made stay (harness.ts, `#keep`).
      return weighted(
        [pick(own.kbs.filter((kb) => kb.expendable).map((kb) => kb.slug)), 3],
        [
          pick(
            liveFiles(own)
              .filter((file) => file.expendable)
              .map((file) => file.path),
          ),
          3,
        ],
        [fc.constantFrom('handbook', 'README.md', 'yes'), 1],
      );
    case 'grant_id':
      return weighted([pick(own.grants.map((grant) => grant.id)), 8], [pick(other.grants.map((grant) => grant.id)), 2], [pick(own.kbs.map((kb) => kb.id)), 1]);
    case 'batch_token':
      return weighted(
        [pick(own.batchTokens.map((batch) => batch.token)), 6],
        [pick(other.batchTokens.map((batch) => batch.token)), 2],
        [fc.stringMatching(/^kgwub_[A-Za-z0-9_-]{10,43}$/), 2],
      );
    case 'team':
      return weighted(
        [pick(own.teams.flatMap((team) => [team.slug, team.id])), 8],
        [pick(other.teams.map((team) => team.id)), 2],
        [fc.constantFrom('nope', 'Docs', ''), 1],
      );
    case 'principal_id':
    case 'actor':
      return weighted([pick([...own.agents, ...own.people]), 8], [pick([...other.agents, ...other.people]), 2], [pick(own.groups), 1]);
    case 'email':
      return weighted(
        [pick(own.emails), 4],
        [pick(other.emails), 2],
        [fc.stringMatching(/^[a-z]{1,8}@(fuzz|example)\.test$/), 4],
        [fc.constantFrom(' Alice@Fuzz.Test ', 'no-at-sign', '@', 'a@b'), 1],
      );
    case 'event_id':
      return weighted([pick(own.auditEvents), 8], [pick(other.auditEvents), 2]);
    case 'tag':
      return fc.constantFrom('policy', 'POLICY', ' release ', 'setup', 'Onboarding', 'missing', '');
    case 'find':
      return pick(SEEDED_TEXT);
    case 'content_base64':
      return weighted(
        [pick(UPLOADS_BASE64), 6],
        [fc.uint8Array({ minLength: 0, maxLength: 64 }).map((bytes) => Buffer.from(bytes).toString('base64')), 2],
        [fc.constantFrom('', '====', 'not base64!', 'iVBORw0KGgo='), 1],
      );
    case 'mime_type':
      return fc.constantFrom(
        'image/png',
        'application/pdf',
        'text/markdown',
        'text/plain',
        'application/octet-stream',
        'image/jpeg',
        'text/html; charset=utf-8',
      );
    case 'slug':
      return weighted([pick(own.kbs.map((kb) => kb.slug)), 2], [pick(other.kbs.map((kb) => kb.slug)), 1], [fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,20}$/), 4]);
    case 'idempotency_key':
      // A few fixed keys, so the replay and "same key, other input" paths run too.
      return fc.oneof(fc.uuid({ version: 4 }), fc.constantFrom('6f1c1b8e-2f4a-4b6e-9c1d-0a1b2c3d4e5f', '7a2d2c9f-3a5b-4c7f-8d2e-1b2c3d4e5f60'));
    case 'skill_md':
      return weighted(
        [pick([...own.skills, ...other.skills].map((s) => skillMd(s.name))), 4],
        [fc.stringMatching(/^[a-z][a-z0-9]{0,10}(-[a-z0-9]{1,6}){0,2}$/).map((name) => skillMd(name)), 4],
        [hostileFrontmatter, 4],
      );
    case 'data_base64':
      return weighted(
        [fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => Buffer.from(bytes).toString('base64')), 6],
        [fc.string({ minLength: 1, maxLength: 40 }).map((text) => Buffer.from(text).toString('base64')), 3],
        [fc.constantFrom('', '====', 'not base64!', 'aGVsbG8', 'aGVsbG8=\n', 'YQ==YQ==', '\u0000'), 1],
      );
    case 'review_by':
    case 'expires_at':
      return fc.constantFrom(today(-1), today(0), today(30), today(365), '2030-06-30');
    case 'occurred_at':
      return fc.integer({ min: -8 * 86_400, max: 600 }).map((seconds) => new Date(Date.now() + seconds * 1000).toISOString());
    case 'title':
    case 'name':
      return weighted([pick([...ownResources.map((r) => r.name), ...other.knowledge.map((r) => r.name)]), 1], [fc.string({ minLength: 1, maxLength: 30 }), 2]);
    case 'integration':
      return fc.constantFrom('claude-code', 'cursor', 'a');
    case 'tool_name':
      return fc.constantFrom('Read', 'mcp__alignbase__read_knowledge', 'Bash');
    default:
      return undefined;
  }
}

/**
 * SKILL.md whose YAML frontmatter carries hostile text: plain, or in double quotes, where YAML
 * escapes (\\0, \\x00, \\ud800, …) turn into the very characters a raw check would refuse.
 */
const hostileFrontmatter: fc.Arbitrary<string> = fc
  .record({
    name: fc.oneof({ arbitrary: fc.stringMatching(/^[a-z][a-z0-9-]{0,12}$/), weight: 4 }, { arbitrary: hostileString({ pathish: true }), weight: 1 }),
    field: fc.oneof(
      { arbitrary: fc.constant('description'), weight: 3 },
      { arbitrary: fc.constantFrom('license', 'compatibility', 'allowed-tools', 'metadata', 'version'), weight: 1 },
    ),
    text: fc.oneof(
      { arbitrary: fc.constantFrom('\\0', '\\x00', 'a\\u0000b', '\\ud800', '\\udfff', '\\U0010FFFF', '\\u202e', '\\x85', '\\x9b', '\\e[31m'), weight: 3 },
      { arbitrary: hostileString(), weight: 1 },
    ),
    style: fc.oneof({ arbitrary: fc.constant('double'), weight: 3 }, { arbitrary: fc.constantFrom('json', 'plain', 'block'), weight: 1 }),
    body: fc.oneof(fc.constant('Follow these steps.'), hostileString()),
  })
  .map(({ name, field, text, style, body }) => {
    const value =
      style === 'double' ? `"${text}"` : style === 'json' ? JSON.stringify(text) : style === 'block' ? `|\n  ${text.replaceAll('\n', '\n  ')}` : text;
    const rendered = field === 'metadata' ? `metadata:\n  note: ${value}` : `${field}: ${value}`;
    const description = field === 'description' ? rendered : `description: Use it.\n${rendered}`;
    return `---\nname: ${name}\n${description}\n---\n\n${body}\n`;
  });

const PATHISH_KEY = /path|dir|file|_id$|^id$/i;
const IDISH_KEY = /_id$|^id$|key$/i;
const DATEISH_KEY = /_at$|_by$|date/i;

/** Hostile values for a position: strings of the kinds its name suggests, numbers at every edge, wrong types. */
export function hostileValues(position: SchemaPosition): fc.Arbitrary<unknown> {
  const key = position.key ?? '';
  const strings = hostileString({ pathish: PATHISH_KEY.test(key), idish: IDISH_KEY.test(key), dateish: DATEISH_KEY.test(key) });
  const numeric = position.types.includes('number') || position.types.includes('integer');
  return fc.oneof(
    { arbitrary: strings, weight: position.types.includes('string') ? 4 : 1 },
    { arbitrary: hostileNumber, weight: numeric ? 4 : 1 },
    { arbitrary: wrongType, weight: 1 },
  );
}

/** The `extra` of the schema generator for plausible arguments: real values where the name means something. */
export function plausibleExtra(pools: Pools): (position: SchemaPosition) => fc.WeightedArbitrary<unknown> | undefined {
  return (position) => {
    if (position.path.length === 0) return undefined;
    const real = realValues(pools, position);
    // Nine times as likely as the schema's own values.
    return real === undefined ? undefined : { arbitrary: real, weight: 18 };
  };
}

/** The `extra` of the schema generator for hostile arguments: real values where the name means something, hostile ones everywhere. */
export function hostileExtra(pools: Pools): (position: SchemaPosition) => fc.WeightedArbitrary<unknown> | undefined {
  return (position) => {
    // The arguments object itself stays an object; mutations break it as a whole.
    if (position.path.length === 0) return undefined;
    const real = realValues(pools, position);
    const hostile = hostileValues(position);
    if (real === undefined) return { arbitrary: hostile, weight: 1 };
    return { arbitrary: fc.oneof({ arbitrary: real, weight: 3 }, { arbitrary: hostile, weight: 2 }), weight: 5 };
  };
}

/** Objects (at any depth) holding a known `id` and a `type` get the id's type: agent, group, knowledge, skill, … */
function withTypesOfIds(value: unknown, index: ReadonlyMap<string, Versioned>, kinds: ReadonlyMap<string, string>): unknown {
  if (Array.isArray(value)) return value.map((item) => withTypesOfIds(item, index, kinds));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = withTypesOfIds(item, index, kinds);
  if (typeof out.id === 'string' && 'type' in out) out.type = index.get(out.id)?.type ?? kinds.get(out.id) ?? out.type;
  return out;
}

/** Lists of objects with a `path` (package files) keep the first of each path. */
function withUniquePaths(value: unknown): unknown {
  if (Array.isArray(value)) {
    const seen = new Set<unknown>();
    return value
      .filter((item) => {
        const path = typeof item === 'object' && item !== null ? (item as { path?: unknown }).path : undefined;
        if (typeof path !== 'string') return true;
        if (seen.has(path.toLowerCase())) return false;
        seen.add(path.toLowerCase());
        return true;
      })
      .map(withUniquePaths);
  }
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withUniquePaths(item)]));
}

/** Both tenants' KBs, files and shares, looked up the way the Atmina tools name them. */
interface KbIndex {
  /** By id and by slug; a slug both tenants use means the own tenant's KB, as it does to the tools. */
  readonly byName: ReadonlyMap<string, KbEntry>;
  readonly byId: ReadonlyMap<string, KbEntry>;
  readonly files: ReadonlyMap<string, KbFileEntry>;
  /** Live files by path, of every KB. */
  readonly atPath: ReadonlyMap<string, readonly KbFileEntry[]>;
  /** Live files by KB id. */
  readonly live: ReadonlyMap<string, readonly KbFileEntry[]>;
  /** The KB of each share, and of each upload batch token. */
  readonly grants: ReadonlyMap<string, string>;
  readonly batches: ReadonlyMap<string, string>;
}

function kbIndexOf(pools: Pools): KbIndex {
  const byName = new Map<string, KbEntry>();
  const byId = new Map<string, KbEntry>();
  const files = new Map<string, KbFileEntry>();
  const atPath = new Map<string, KbFileEntry[]>();
  const live = new Map<string, KbFileEntry[]>();
  const grants = new Map<string, string>();
  const batches = new Map<string, string>();
  for (const pool of [pools.other, pools.own]) {
    for (const kb of pool.kbs) {
      byId.set(kb.id, kb);
      byName.set(kb.id, kb);
      byName.set(kb.slug, kb);
    }
    for (const file of pool.kbFiles) {
      files.set(file.id, file);
      if (file.deleted) continue;
      atPath.set(file.path, [...(atPath.get(file.path) ?? []), file]);
      live.set(file.kbId, [...(live.get(file.kbId) ?? []), file]);
    }
    for (const grant of pool.grants) grants.set(grant.id, grant.kbId);
    for (const batch of pool.batchTokens) batches.set(batch.token, batch.kbId);
  }
  return { byName, byId, files, atPath, live, grants, batches };
}

/**
 * A write (write_file, or an item of write_files) whose fields agree with its mode: content for
 * create, overwrite and append, edits for patch; and, mostly, integrity fields that describe
 * the content sent. Answers the same object.
 */
function cohereWrite(write: Record<string, unknown>, pick: number): Record<string, unknown> {
  if (typeof write.mode !== 'string') return write;
  if (write.mode === 'patch') {
    delete write.content;
    if (!Array.isArray(write.patch)) write.patch = [{ find: SEEDED_TEXT[pick % SEEDED_TEXT.length], replace: 'Fuzzed.' }];
  } else {
    delete write.patch;
    if (typeof write.content !== 'string') write.content = `Fuzzed ${pick}.\n`;
  }
  if (write.mode === 'create') delete write.if_match;
  if (typeof write.content === 'string' && pick % 3 !== 0) {
    const bytes = Buffer.from(write.content, 'utf8');
    if ('expected_bytes' in write) write.expected_bytes = bytes.length;
    if ('content_sha256' in write) write.content_sha256 = createHash('sha256').update(bytes).digest('hex');
  }
  return write;
}

/** How a call names a KB: its slug when the slug means that KB, else its id. */
function nameOf(kb: KbEntry, index: KbIndex, pick: number): string {
  return pick % 2 === 0 && index.byName.get(kb.slug) === kb ? kb.slug : kb.id;
}

/**
 * Makes the arguments of a Knowledge-Base tool agree with the store: the KB is the one that
 * holds the file named (the path wins over file_id, as the tools read them), if_match is that
 * file's head, a version to restore is one it has, a confirmation names what is deleted (when
 * the fuzzing may delete it), a grant is revoked and a batch confirmed on its KB, a share names
 * one grantee, a write's fields fit its mode. Sometimes a KB named alone gets one of its files.
 */
function cohereKb(out: Record<string, unknown>, properties: ReadonlySet<string>, index: KbIndex, pick: number): void {
  if (!('kb_id' in out)) return;
  const named = typeof out.kb_id === 'string' ? index.byName.get(out.kb_id) : undefined;
  // A tool that takes the file by path or file_id needs one of them.
  if (properties.has('path') && properties.has('file_id') && !('path' in out) && !('file_id' in out) && pick % 4 !== 0) {
    const files = (named === undefined ? undefined : index.live.get(named.id)) ?? [...index.files.values()];
    const chosen = files[pick % Math.max(files.length, 1)];
    if (chosen !== undefined) {
      if (pick % 3 === 0) out.file_id = chosen.id;
      else out.path = chosen.path;
    }
  }
  cohereWrite(out, pick);
  if (Array.isArray(out.items))
    out.items = out.items.map((item: unknown, at) => (typeof item === 'object' && item !== null ? cohereWrite({ ...item }, pick + at) : item));
  const atPath = typeof out.path === 'string' ? (index.atPath.get(out.path) ?? []) : [];
  let file = atPath.find((f) => f.kbId === named?.id) ?? atPath[pick % Math.max(atPath.length, 1)];
  if (file === undefined && typeof out.path !== 'string' && typeof out.file_id === 'string') file = index.files.get(out.file_id);
  if (file === undefined && named !== undefined && ('path' in out || 'file_id' in out) && pick % 3 === 0) {
    const files = index.live.get(named.id) ?? [];
    file = files[pick % Math.max(files.length, 1)];
    if (file !== undefined) {
      if ('path' in out) out.path = file.path;
      else out.file_id = file.id;
    }
  }
  if (file !== undefined) {
    const holder = index.byId.get(file.kbId);
    if (holder !== undefined) out.kb_id = nameOf(holder, index, pick);
    if ('if_match' in out && pick % 5 !== 0) out.if_match = file.sha256;
    if (typeof out.version === 'number') out.version = 1 + (pick % file.latest);
    if ('confirm' in out && file.expendable) out.confirm = file.path;
  } else if (named !== undefined && 'confirm' in out && !('path' in out) && !('file_id' in out) && named.expendable) {
    out.confirm = named.slug;
  }
  // A share is revoked, and a batch confirmed, on its own KB; a share names one grantee.
  const ownerKb =
    typeof out.grant_id === 'string' ? index.grants.get(out.grant_id) : typeof out.batch_token === 'string' ? index.batches.get(out.batch_token) : undefined;
  const holder = ownerKb === undefined ? undefined : index.byId.get(ownerKb);
  if (holder !== undefined) out.kb_id = nameOf(holder, index, pick);
  if ('principal_id' in out && 'team' in out) delete out[pick % 2 === 0 ? 'principal_id' : 'team'];
}

const RESOURCE_ID = /^(knowledge|skill|memory|artifact|context)_id$/;
const ID_KEYS = ['knowledge_id', 'skill_id', 'memory_id', 'artifact_id'];

/**
 * Makes generated arguments agree with the store where their names say how: the version to
 * replace is the resource's latest, a create names no id, an attachment read names the
 * resource's type and one of its files, a KB tool's file, KB and if_match belong together
 * (`cohereKb`). `use` false leaves the arguments alone.
 */
function cohere(
  args: Record<string, unknown>,
  required: readonly string[],
  index: ReadonlyMap<string, Versioned>,
  kinds: ReadonlyMap<string, string>,
  properties: ReadonlySet<string>,
  kbs: KbIndex,
  choice: { use: boolean; pick: number },
): Record<string, unknown> {
  if (!choice.use) return args;
  const out = withUniquePaths(withTypesOfIds(args, index, kinds)) as Record<string, unknown>;
  cohereKb(out, properties, kbs, choice.pick);
  // A review date after the expiry date is refused before anything else is looked at.
  const date = /^\d{4}-\d{2}-\d{2}$/;
  if (
    typeof out.review_by === 'string' &&
    typeof out.expires_at === 'string' &&
    date.test(out.review_by) &&
    date.test(out.expires_at) &&
    out.expires_at < out.review_by
  ) {
    [out.review_by, out.expires_at] = [out.expires_at, out.review_by];
  }
  if (out.expected_version === 0 && ID_KEYS.some((key) => key in out && !required.includes(key))) {
    for (const key of ID_KEYS) if (!required.includes(key)) delete out[key];
    return out;
  }
  for (const key of Object.keys(out)) {
    const value = out[key];
    if (!RESOURCE_ID.test(key) || typeof value !== 'string') continue;
    const resource = index.get(value);
    if (resource === undefined) continue;
    if ('expected_version' in out) out.expected_version = resource.latest;
    if ('base_version' in out) out.base_version = resource.latest;
    if (key === 'context_id') {
      out.context_type = resource.type;
      out.version = resource.latest;
      if (resource.paths.length > 0) out.path = resource.paths[choice.pick % resource.paths.length];
    }
  }
  return out;
}

/** Why the generator cannot cover a listed tool's input schema; empty when it can. */
export function inputSchemaProblems(tool: Tool): string[] {
  const schema = tool.inputSchema as SchemaObject | undefined;
  if (schema === undefined || typeof schema !== 'object') return ['no input schema'];
  if (schema.type !== 'object') return [`the input schema's type is ${JSON.stringify(schema.type)}, not "object"`];
  return unsupportedKeywords(schema);
}

/**
 * Arguments for one tool, in three kinds: plausible ones (schema values and real ids, made to
 * agree with the store) that reach the deep code paths; plausible ones with one value at any
 * depth made hostile; and hostile ones throughout, sometimes with the object itself broken
 * (a required field dropped, an unknown one added, a value of the wrong type).
 */
export function argumentsFor(tool: Tool, pools: Pools): fc.Arbitrary<Record<string, unknown>> {
  const schema = tool.inputSchema as SchemaObject;
  const index = new Map<string, Versioned>();
  const kinds = new Map<string, string>();
  for (const pool of [pools.own, pools.other]) {
    for (const r of resourcesOf(pool)) index.set(r.id, r);
    for (const id of pool.agents) kinds.set(id, 'agent');
    for (const id of pool.groups) kinds.set(id, 'group');
  }
  const kbs = kbIndexOf(pools);
  const properties = new Set(typeof schema.properties === 'object' && schema.properties !== null ? Object.keys(schema.properties) : []);
  const asObject = (value: unknown): Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  const plausible = fc
    .tuple(
      arbitraryFromSchema(schema, { extra: plausibleExtra(pools), optionalFreq: 2 }),
      fc.record({ use: fc.nat({ max: 4 }).map((n) => n > 0), pick: fc.nat() }),
    )
    .map(([args, choice]) =>
      cohere(asObject(args), Array.isArray(schema.required) ? (schema.required as string[]) : [], index, kinds, properties, kbs, choice),
    );
  const hostile = withMutations(schema, arbitraryFromSchema(schema, { extra: hostileExtra(pools) }));
  return fc.oneof({ arbitrary: plausible, weight: 4 }, { arbitrary: withOneHostileValue(plausible), weight: 3 }, { arbitrary: hostile, weight: 2 });
}
