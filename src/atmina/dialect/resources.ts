import type { KbAccess } from '../access/team-roles.ts';
import { readStanding } from '../../kernel/directory/whoami.ts';
import { currentTeamOf } from '../kb/team-choice.ts';
import type { KgwError } from '../../kernel/errors.ts';
import { kbFor } from '../kb/access.ts';
import type { KbWithAccess } from '../kb/access.ts';
import { LIST_LIMIT_MAX, listFiles } from '../kb/catalog.ts';
import { findFile, readFile } from '../kb/files.ts';
import { listKbs } from '../kb/kbs.ts';
import type { KbProjectionBacklog } from '../kb/status.ts';
import { indexingStatus, kbBacklogs, kbTotals } from '../kb/status.ts';
import type { ResourceContext, ResourceDef } from '../../mcp/resource.ts';
import { jsonText } from '../../mcp/resource.ts';
import { atminaText } from './errors.ts';
import { healthReport } from './health.ts';
import { fileWire, kbWire, listedFileWire } from './schemas.ts';

/*
 * The Atmina resources (spec: "Resources and recovery"): read-only views of what the tools
 * show, for clients that read resources. Each checks access as the tool that shows the same
 * thing does: a KB out of reach reads as a missing one (not_found), a role too low is
 * permission_denied. The JSON is the tools' wire (snake_case, ISO instants).
 */

const BASE = { dialect: 'atmina', scopes: ['context.read'], errorText: (error: KgwError) => atminaText(error) } as const;

const kbParam = (params: Readonly<Record<string, string>>): string => params.kb_id ?? '';

function backlogWire(b: KbProjectionBacklog) {
  return {
    projection: b.projection,
    pending: b.pending,
    failing: b.failing,
    oldest_pending_at: b.oldestPendingAt,
    last_error: b.lastError,
    last_error_at: b.lastErrorAt,
  };
}

/** A KB the caller may read (Viewer), with the read recorded on its audit trail. */
async function viewable({ caller, services, audit }: ResourceContext, given: string, action: string): Promise<KbWithAccess> {
  const kb = await kbFor(services.db, caller, given, 'viewer', action);
  audit.touch({ type: 'kb', id: kb.kb.id });
  return kb;
}

const status: ResourceDef = {
  ...BASE,
  uri: 'atmina://status',
  name: 'status',
  title: 'Gateway status',
  description: 'Build and the health of each backend (store, file bytes, search, graph), as the health tool reports them.',
  mimeType: 'application/json',
  async read({ services }) {
    return jsonText(await healthReport(services));
  },
};

const myTeam: ResourceDef = {
  ...BASE,
  uri: 'atmina://my-team',
  name: 'my-team',
  title: 'My teams',
  description:
    'Who you are, the teams you belong to with your role in each, and your current team, which create_kb and the team settings act for when you name no team.',
  mimeType: 'application/json',
  async read({ caller, services }) {
    const standing = await readStanding(services.db, caller);
    const { profile } = standing;
    const team = currentTeamOf(standing);
    return jsonText({
      principal: profile.principal,
      teams: profile.teams,
      current_team: team === undefined ? null : { team_id: team.id, slug: team.slug, name: team.name },
      default_team_for_create_kb: team?.admin === true ? team.slug : null,
    });
  },
};

const myKbs: ResourceDef = {
  ...BASE,
  uri: 'atmina://my-kbs',
  name: 'my-kbs',
  title: 'My Knowledge Bases',
  description: 'The Knowledge Bases you can use, as list_kbs answers.',
  mimeType: 'application/json',
  async read({ caller, services, audit }) {
    const kbs = await listKbs(services.db, caller);
    audit.touch(...kbs.map(({ kb }) => ({ type: 'kb', id: kb.id })));
    return jsonText({ kbs: kbs.map(kbWire) });
  },
};

const READABLE: readonly KbAccess[] = ['viewer', 'editor', 'admin'];

const myTeamStatus: ResourceDef = {
  ...BASE,
  uri: 'atmina://my-team-status',
  name: 'my-team-status',
  title: 'My teams’ status',
  description: 'Per owning team of the Knowledge Bases you can read: each KB with its live files, bytes and what search and the graph still have to index.',
  mimeType: 'application/json',
  async read({ caller, services, audit }) {
    const readable = (await listKbs(services.db, caller)).filter((k) => READABLE.includes(k.access));
    const ids = readable.map((k) => k.kb.id);
    const [totals, backlogs] = await Promise.all([kbTotals(services.db, caller.tenant.id, ids), kbBacklogs(services.db, caller.tenant.id, ids)]);
    audit.touch(...ids.map((id) => ({ type: 'kb', id })));
    const teams = new Map<string, { team_id: string; slug: string; name: string; kbs: unknown[] }>();
    for (const { kb, access } of readable) {
      const team = teams.get(kb.team.id) ?? { team_id: kb.team.id, slug: kb.team.slug, name: kb.team.name, kbs: [] };
      const total = totals.get(kb.id) ?? { files: 0, bytes: 0 };
      const backlog = backlogs.get(kb.id) ?? [];
      team.kbs.push({
        kb_id: kb.id,
        slug: kb.slug,
        role: access,
        files: total.files,
        bytes: total.bytes,
        indexed: backlog.every((b) => b.pending === 0),
        indexing: backlog.map(backlogWire),
      });
      teams.set(kb.team.id, team);
    }
    return jsonText({ teams: [...teams.values()].sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0)) });
  },
};

const kb: ResourceDef = {
  ...BASE,
  uriTemplate: 'atmina://kb/{kb_id}',
  name: 'kb',
  title: 'Knowledge Base',
  description: 'One Knowledge Base (by kb_id or slug): as list_kbs shows it, with its live files and bytes. Needs Viewer.',
  mimeType: 'application/json',
  async read(context, params) {
    const target = await viewable(context, kbParam(params), 'reading a Knowledge Base');
    const totals = await kbTotals(context.services.db, context.caller.tenant.id, [target.kb.id]);
    const total = totals.get(target.kb.id) ?? { files: 0, bytes: 0 };
    return jsonText({ ...kbWire(target), files: total.files, bytes: total.bytes });
  },
};

const kbFiles: ResourceDef = {
  ...BASE,
  uriTemplate: 'atmina://kb/{kb_id}/files',
  name: 'kb-files',
  title: 'Files of a Knowledge Base',
  description: `The first ${LIST_LIMIT_MAX} live files by path, as list_files answers; continue with list_files and next_cursor. Needs Viewer.`,
  mimeType: 'application/json',
  async read({ caller, services, audit }, params) {
    const page = await listFiles(services.db, caller, { kbId: kbParam(params), limit: LIST_LIMIT_MAX }, audit);
    audit.touch({ type: 'kb', id: page.kb.kb.id });
    return jsonText({ kb_id: page.kb.kb.id, files: page.files.map(listedFileWire), next_cursor: page.nextCursor ?? null });
  },
};

const kbFile: ResourceDef = {
  ...BASE,
  uriTemplate: 'atmina://kb/{kb_id}/files/{file_id}',
  name: 'kb-file',
  title: 'A file of a Knowledge Base',
  description: 'One live file by file_id: its catalog entry, and for a text file its content, as read_file answers. Needs Viewer.',
  mimeType: 'application/json',
  async read(context, params) {
    const { caller, services, audit } = context;
    const target = await viewable(context, kbParam(params), 'reading files');
    const file = await findFile(services.db, caller.tenant.id, target.kb.id, { fileId: params.file_id ?? '', given: params.file_id ?? '' });
    if (file.kind !== 'text') {
      audit.touch({ type: 'kb_file', id: file.id, version: file.version });
      return jsonText({ kb_id: target.kb.id, ...fileWire(file) });
    }
    const read = await readFile(services, caller, { kbId: target.kb.id, fileId: file.id }, audit);
    return jsonText({ kb_id: read.kb.kb.id, ...fileWire(read.file), content: read.content });
  },
};

const kbIndexing: ResourceDef = {
  ...BASE,
  uriTemplate: 'atmina://kb/{kb_id}/indexing-status',
  name: 'kb-indexing-status',
  title: 'Indexing status of a Knowledge Base',
  description:
    'How far search and the graph are behind the KB’s files: rows pending and failing per projection, the oldest pending and the latest error. A successful write can precede indexing. Needs Viewer.',
  mimeType: 'application/json',
  async read({ caller, services, audit }, params) {
    const found = await indexingStatus(services.db, caller, kbParam(params));
    audit.touch({ type: 'kb', id: found.kb.kb.id });
    return jsonText({
      kb_id: found.kb.kb.id,
      slug: found.kb.kb.slug,
      files: found.totals.files,
      indexed: found.projections.every((p) => p.pending === 0),
      projections: found.projections.map(backlogWire),
    });
  },
};

export const AGENT_QUICKSTART = `# Atmina: agent quickstart

Atmina keeps your organisation's Knowledge Bases (KBs): folders of files that people and agents
read and write through these tools. The tool list is authoritative: a tool you do not see is one
your role or connection cannot use.

## Orient

1. Call \`whoami\`: who you are, your teams and your role in each, your connection's scopes.
2. Call \`list_kbs\`: the KBs you can use, each with its \`kb_id\`, slug, owning team and your role
   (\`search\`, \`viewer\`, \`editor\` or \`admin\`). Pass the \`kb_id\` (or the slug) as \`kb_id\`.
3. If a KB is absent, do not guess its identifier: you lack access or are connected to the wrong
   team. Every KB out of your reach answers \`not_found\`, whether or not it exists.

## Read

- \`list_files\` is the exhaustive catalog: every live file under a \`path_prefix\`, a page at a time
  (\`next_cursor\`). Use it for "every file under policies/".
- \`read_file\` takes \`kb_id\` and \`path\` or \`file_id\` (the path wins when both are sent) and answers the
  exact content with \`size_bytes\`, \`sha256\` and \`version\`.
- \`file_history\` lists a file's versions, newest first.
- A write is saved before search sees it: \`atmina://kb/{kb_id}/indexing-status\` shows what is still
  waiting.

## Write

- Read first, and carry the \`sha256\` you read as \`if_match\`. The write applies only to the version
  you read; otherwise it is \`conflict\`: read again, reapply your edit, and back off at random
  before retrying.
- \`write_file\` modes: \`create\` (fails when the path exists), \`overwrite\`, \`append\`, or \`patch\`
  (exact find/replace edits, in order; a \`find\` that occurs several times needs \`occurrence\`).
- Send \`expected_bytes\` and \`content_sha256\` of the exact UTF-8 bytes you send (for \`patch\`: of the
  whole file you expect); a mismatch is \`content_integrity\` and nothing is written.
- \`write_files\` applies up to 50 items with a result each; one path may repeat as ordered edits
  of one file, each carrying the \`sha256\` the item before produced as \`if_match\`.
- \`generate_hub_index\` and \`generate_nav\`: preview, then call with \`operation: "apply"\`; add the
  preview's \`sha256\` and \`current_sha256\` (as \`if_match\`) to write only if nothing moved.
- Text files hold at most 1 MiB. Larger or binary content goes through uploads
  (\`request_uploads\`, PUT the exact bytes with every returned header, then \`confirm_uploads\`) where
  the server offers them.
- \`move_file\`, \`restore_version\` (with \`if_match\` of the current head) and \`delete_file\` (Admin; confirm
  with the file's current path) keep the history.

## Errors

Errors read \`code: message\`. Branch on the code:

| code | means | do |
|---|---|---|
| \`validation\` | bad input | fix the argument the message names; do not retry as is |
| \`permission_denied\` | role or scope too low | do not retry; ask for access |
| \`not_found\` | no such KB or file for you | check the identifier with \`list_kbs\` / \`list_files\` |
| \`conflict\` | stale state | read again and reapply the intended change; do not blindly retry (only a lost race or a busy batch says to wait, after the message) |
| \`content_integrity\` | byte count or hash mismatch | recompute both from the exact UTF-8 bytes |
| \`payload_too_large\` | too big for inline content | use uploads |
| \`rate_limited\` | too many calls | wait the interval the message gives |
| \`unavailable\` | a backend is down | retry later; \`health\` shows which |

## Resources

\`atmina://status\`, \`atmina://my-team\`, \`atmina://my-kbs\`, \`atmina://my-team-status\`,
\`atmina://kb/{kb_id}\`, \`atmina://kb/{kb_id}/files\`, \`atmina://kb/{kb_id}/files/{file_id}\`,
\`atmina://kb/{kb_id}/indexing-status\` and \`atmina://kb/{kb_id}/write-guide\`.
`;

const quickstart: ResourceDef = {
  ...BASE,
  uri: 'atmina://docs/agent-quickstart',
  name: 'agent-quickstart',
  title: 'Agent quickstart',
  description: 'How to orient, read, write safely with if_match, upload, and handle each error code.',
  mimeType: 'text/markdown',
  read: () => Promise.resolve(AGENT_QUICKSTART),
};

const CAN: Readonly<Record<KbAccess, string>> = {
  none: 'nothing',
  search: 'find this KB, but not read or write its files',
  viewer: 'read: list_files, read_file, file_history; writing needs Editor',
  editor: 'read and write: write_file, write_files, move_file, restore_version; deleting files and changing the KB need Admin',
  admin: 'read and write, delete files (delete_file), change the KB (update_kb) and archive it (delete_kb)',
};

/** The write guide of one KB: the quickstart's rules, with this KB's identifiers and what the reader's role allows. */
export function writeGuide(target: KbWithAccess): string {
  const { kb: k, access } = target;
  return `# Writing to ${k.name}

- kb_id: \`${k.id}\` (slug \`${k.slug}\`), owned by team ${k.team.name} (\`${k.team.slug}\`), visibility \`${k.visibility}\`.
- Your role here: **${access}**: you can ${CAN[access]}.

## Before you write

1. Find the file: \`list_files\` with \`kb_id: "${k.id}"\` and a \`path_prefix\`, or \`read_file\` by path.
2. Read it and keep its \`sha256\`.

## Write

- New file: \`write_file\` with \`mode: "create"\`, \`path\`, \`content\`, and \`expected_bytes\` /
  \`content_sha256\` of the exact UTF-8 bytes of \`content\`.
- Change a file: \`mode: "patch"\` with exact \`find\`/\`replace\` edits, or \`overwrite\`, always with
  \`if_match\` set to the \`sha256\` you read; \`append\` adds at the end.
- Several files: \`write_files\` (up to 50 items; each gets its own result).
- Paths are relative, \`/\` between folders, case-sensitive (\`Notes.md\` and \`notes.md\` are two files),
  with no \`..\`, control or invisible characters.
- Text files hold at most 1 MiB; bigger or binary content goes through uploads where offered.

## After you write

- The answer holds the new \`sha256\` and \`version\`: carry it as the next \`if_match\`.
- \`changed: false\` means the file already held exactly this; no version was saved.
- Search sees the change once indexed: \`atmina://kb/${k.id}/indexing-status\`.

## When it fails

- \`conflict\`: someone changed the file. Read it again, reapply your edit, retry after a random wait.
- \`content_integrity\`: recompute \`expected_bytes\` and \`content_sha256\` from the exact UTF-8 bytes.
- \`validation\`: fix the argument the message names. \`permission_denied\`: your role is too low here.
- \`payload_too_large\`: use uploads.
`;
}

const kbWriteGuide: ResourceDef = {
  ...BASE,
  uriTemplate: 'atmina://kb/{kb_id}/write-guide',
  name: 'kb-write-guide',
  title: 'Write guide of a Knowledge Base',
  description: 'How to write to this KB safely: its identifiers, what your role allows, if_match, integrity fields and what each error means. Needs Viewer.',
  mimeType: 'text/markdown',
  async read(context, params) {
    return writeGuide(await viewable(context, kbParam(params), 'reading a Knowledge Base'));
  },
};

/** Every Atmina resource, fixed ones first. */
export const atminaResources: readonly ResourceDef[] = [status, myTeam, myKbs, myTeamStatus, quickstart, kb, kbFiles, kbFile, kbIndexing, kbWriteGuide];
