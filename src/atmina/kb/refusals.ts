import type { KbAccess, TeamRole } from '../access/team-roles.ts';
import type { KgwError } from '../../kernel/errors.ts';
import { refusal } from '../../kernel/errors.ts';

/**
 * The refusals of Knowledge Bases and their files, each with its machine reason and facts. The
 * messages are written for the agent that called: the Atmina dialect shows them as
 * `code: message`, and the CLI as they are. None of them holds content, and a KB or file the
 * caller cannot see is described only by what the caller itself sent.
 */

/** The reasons of this area, merged into the kernel's ReasonFacts (src/kernel/errors.ts) below. */
export interface KbReasonFacts {
  /** Unknown, archived, of another team without a share, of another tenant, or not an id at all: one answer. */
  kb_not_found: { given: string };
  /** The caller sees the KB but its role there is below what the action needs. */
  kb_role: { needed: TeamRole; have: KbAccess };
  kb_invalid_field: { field: string; problem: string };
  kb_slug_taken: { slug: string };
  /** delete_kb / delete_file without the confirmation they need. */
  kb_confirmation: { field: string; expected: string };
  team_not_found: { given: string };
  /** Not Admin of the named team (or, unnamed, of any team). */
  team_role: { team: string | undefined };
  invalid_path: { field: string; problem: string };
  file_not_found: { given: string };
  file_exists: { path: string };
  file_version_not_found: { version: number };
  file_not_text: { kind: 'text' | 'asset' };
  file_too_large: { bytes: number; maxBytes: number };
  /** if_match is not the head's SHA-256. */
  stale_if_match: { head: string };
  content_integrity: { field: 'expected_bytes' | 'content_sha256'; expected: string | number; actual: string | number };
  /** A patch edit whose find text is not in the file; `guarded`: the file was the one if_match named. */
  patch_find_missing: { edit: number; guarded: boolean };
  patch_find_ambiguous: { edit: number; occurrences: number };
  write_mode_input: { mode: string; problem: string };
  batch_duplicate_path: { path: string; items: readonly number[] };
  /** An item of write_files left out because an earlier item for its path failed. */
  batch_item_skipped: { after: number };
  /** A later item of a path in write_files whose if_match is not the SHA-256 the item before it produced. */
  batch_chain_mismatch: { previous: number; sha256: string };
  batch_bounds: { field: 'items' | 'concurrency'; max: number };
  invalid_cursor: Record<string, never>;
  /** The write could not be applied after retrying on a head that kept moving. */
  write_contended: { attempts: number };
  /** Team settings: not Admin of the named team (or, unnamed, of any team). */
  settings_team_role: { team: string | undefined };
  /** A share's target (principal or team) that is not in the tenant: one answer, like a missing KB. */
  share_target_not_found: { given: string };
  share_not_found: { given: string };
  /** An audit event that does not exist or names nothing the caller may audit. */
  audit_event_not_found: { given: string };
  /** audit_log by a caller who is Editor of no KB and no team. */
  audit_role: Record<string, never>;
  /** generate_hub_index / generate_nav applied with a sha256 the KB's files no longer generate. */
  generated_changed: { path: string };
  /** The generated file's head is not the one the preview saw (if_match; null: no file). */
  generated_head_moved: { path: string; head: string | null; expected: string | null };
}

export type KbReason = keyof KbReasonFacts;

// The kernel's ReasonFacts gains these reasons, so a KgwError carries them as one `Reason`.
declare module '../../kernel/errors.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface ReasonFacts extends KbReasonFacts {}
}

const ROLE_NAME: Readonly<Record<KbAccess, string>> = { none: 'no role', search: 'search only', viewer: 'Viewer', editor: 'Editor', admin: 'Admin' };

/** Text the caller sent, as it appears inside a message: quoted, and cut when long. */
export function quoted(given: string): string {
  return JSON.stringify(given.length > 120 ? `${given.slice(0, 120)}…` : given);
}

export const refuseKb = {
  kbNotFound: (given: string): KgwError =>
    refusal(
      'not_found',
      'kb_not_found',
      { given },
      `no Knowledge Base ${quoted(given)} is available to you; call list_kbs for the ones you can use, and do not guess identifiers`,
    ),
  kbRole: (action: string, needed: TeamRole, have: KbAccess): KgwError =>
    refusal(
      'permission_denied',
      'kb_role',
      { needed, have },
      `${action} needs the ${ROLE_NAME[needed]} role on this Knowledge Base; you have ${ROLE_NAME[have]}`,
    ),
  invalidField: (field: string, problem: string): KgwError => refusal('validation', 'kb_invalid_field', { field, problem }, `${field}: ${problem}`),
  // One answer whichever KB holds the slug (one the caller sees, one it may not see, an archived
  // one): naming it, or saying "already used by a Knowledge Base", would confirm that a KB the
  // caller cannot see exists (docs/decisions.md, "KB slugs that are taken").
  slugTaken: (slug: string): KgwError =>
    refusal(
      'conflict',
      'kb_slug_taken',
      { slug },
      `the slug ${quoted(slug)} is not available; choose another, or leave slug out and one is derived from the name`,
    ),
  confirmation: (field: string, expected: string, what: string): KgwError =>
    refusal('validation', 'kb_confirmation', { field, expected }, `${field} must be ${quoted(expected)} to ${what}; nothing was changed`),
  teamNotFound: (given: string, choices: readonly string[]): KgwError =>
    refusal('validation', 'team_not_found', { given }, `team: no team ${quoted(given)} in this organisation${adminOf(choices)}`),
  teamRole: (team: string | undefined, choices: readonly string[]): KgwError =>
    refusal(
      'permission_denied',
      'team_role',
      { team },
      team === undefined
        ? 'creating a Knowledge Base needs the Admin role in a team; you are Admin of none'
        : `creating a Knowledge Base in team ${quoted(team)} needs the Admin role there${adminOf(choices)}`,
    ),
  invalidPath: (field: string, problem: string): KgwError => refusal('validation', 'invalid_path', { field, problem }, `${field}: ${problem}`),
  fileNotFound: (given: string): KgwError =>
    refusal('not_found', 'file_not_found', { given }, `no file ${quoted(given)} in this Knowledge Base; list_files shows the ones there are`),
  fileExists: (path: string): KgwError =>
    refusal('conflict', 'file_exists', { path }, `a file already exists at ${quoted(path)}; read it and write with mode overwrite, append or patch`),
  fileVersionNotFound: (version: number): KgwError =>
    refusal('not_found', 'file_version_not_found', { version }, `this file has no version ${version}; file_history lists the retained versions`),
  fileNotText: (kind: 'text' | 'asset'): KgwError =>
    refusal('validation', 'file_not_text', { kind }, 'this file is an Asset, not UTF-8 text; the text file tools cannot read or change it'),
  fileTooLarge: (bytes: number, maxBytes: number): KgwError =>
    refusal(
      'payload_too_large',
      'file_too_large',
      { bytes, maxBytes },
      `the file would be ${bytes} bytes; text writes keep files to ${maxBytes} bytes of UTF-8 (use request_uploads for larger files)`,
    ),
  staleIfMatch: (head: string): KgwError =>
    refusal(
      'conflict',
      'stale_if_match',
      { head },
      'the file changed since you read it: if_match is not the current SHA-256; read the file again and reapply your edit',
      { sha256: head },
    ),
  contentIntegrity: (field: 'expected_bytes' | 'content_sha256', expected: string | number, actual: string | number, of: string): KgwError =>
    refusal(
      'content_integrity',
      'content_integrity',
      { field, expected, actual },
      `${field} is ${expected} but ${of} ${field === 'expected_bytes' ? 'has' : 'hashes to'} ${actual}; recompute it from the exact UTF-8 bytes (nothing was written)`,
    ),
  patchFindMissing: (edit: number, guarded: boolean): KgwError =>
    guarded
      ? refusal(
          'validation',
          'patch_find_missing',
          { edit, guarded },
          `patch[${edit}].find does not occur in the file (which is the version if_match names); nothing was written`,
        )
      : refusal(
          'conflict',
          'patch_find_missing',
          { edit, guarded },
          `patch[${edit}].find does not occur in the current file; it may have changed since you read it: read it again (and pass its sha256 as if_match); nothing was written`,
        ),
  patchFindAmbiguous: (edit: number, occurrences: number): KgwError =>
    refusal(
      'validation',
      'patch_find_ambiguous',
      { edit, occurrences },
      `patch[${edit}].find occurs ${occurrences} times; set occurrence to 1..${occurrences}, or "all", or make find longer; nothing was written`,
    ),
  writeModeInput: (mode: string, problem: string): KgwError => refusal('validation', 'write_mode_input', { mode, problem }, `mode ${mode}: ${problem}`),
  batchDuplicatePath: (path: string, items: readonly number[]): KgwError =>
    refusal(
      'validation',
      'batch_duplicate_path',
      { path, items },
      `items ${items.join(', ')} name the same path ${quoted(path)}; a path may repeat only as later append, patch or overwrite items, each applied to the result of the one before (an overwrite must carry that result's sha256 as if_match); nothing was written`,
    ),
  batchItemSkipped: (after: number): KgwError =>
    refusal('conflict', 'batch_item_skipped', { after }, `not applied: item ${after} for the same path failed, and this edit builds on it`),
  batchChainMismatch: (previous: number, sha256: string): KgwError =>
    refusal(
      'conflict',
      'batch_chain_mismatch',
      { previous, sha256 },
      `not applied: if_match is not the sha256 item ${previous} of this batch left at this path (${sha256}); carry each item's new sha256 forward as the next one's if_match, or leave if_match out`,
      { sha256 },
    ),
  batchBounds: (field: 'items' | 'concurrency', max: number): KgwError =>
    refusal(
      'validation',
      'batch_bounds',
      { field, max },
      field === 'items' ? `items must hold 1 to ${max} writes` : `concurrency must be a whole number from 1 to ${max}`,
    ),
  invalidCursor: (): KgwError => refusal('validation', 'invalid_cursor', {}, 'cursor: not a cursor this tool returned; start again without it'),
  settingsTeamRole: (team: string | undefined, choices: readonly string[]): KgwError =>
    refusal(
      'permission_denied',
      'settings_team_role',
      { team },
      team === undefined
        ? 'team settings need the Admin role in a team; you are Admin of none'
        : `the settings of team ${quoted(team)} need the Admin role there${adminOf(choices)}`,
    ),
  shareTargetNotFound: (given: string): KgwError =>
    refusal(
      'not_found',
      'share_target_not_found',
      { given },
      `no person, agent or team ${quoted(given)} in this organisation; whoami and list_kbs show identifiers you can use`,
    ),
  shareNotFound: (given: string): KgwError =>
    refusal(
      'not_found',
      'share_not_found',
      { given },
      `no share ${quoted(given)} of this Knowledge Base; share_kb and invite_to_kb answer the grant_id to revoke`,
    ),
  auditEventNotFound: (given: string): KgwError =>
    refusal('not_found', 'audit_event_not_found', { given }, `no audit event ${quoted(given)} is available to you; audit_log lists the ones you can read`),
  auditRole: (): KgwError =>
    refusal('permission_denied', 'audit_role', {}, 'the audit log needs the Editor role on a Knowledge Base or in a team; you have neither'),
  writeContended: (attempts: number): KgwError =>
    refusal('conflict', 'write_contended', { attempts }, `the file kept changing while this write was applied (${attempts} attempts); read it again and retry`),
  generatedChanged: (path: string): KgwError =>
    refusal(
      'conflict',
      'generated_changed',
      { path },
      `the Knowledge Base's files changed since the preview, so ${quoted(path)} would differ from it; preview again and apply the new sha256, or apply without sha256 to write what they generate now`,
    ),
  generatedHeadMoved: (path: string, head: string | null, expected: string | null): KgwError =>
    refusal(
      'conflict',
      'generated_head_moved',
      { path, head, expected },
      head === null
        ? `${quoted(path)} was removed since the preview; preview again and apply with its current_sha256 (null), or without if_match`
        : expected === null
          ? `a file was written at ${quoted(path)} since the preview, which saw none (if_match null); preview again and apply with its current_sha256, or without if_match to replace it`
          : `${quoted(path)} changed since the preview (if_match is not its SHA-256); preview again and apply with its current_sha256, or without if_match to replace it`,
    ),
};

function adminOf(choices: readonly string[]): string {
  return choices.length === 0 ? '' : `; you are Admin of: ${choices.join(', ')}`;
}
