import { ALIGNBASE_ORG_SECTIONS } from './alignbase/index.ts';
import { ATMINA_ORG_SECTIONS } from './atmina/index.ts';
import { brainSection, orgGraphApplyHook } from './brain/index.ts';
import type { OrgFileApplier } from './kernel/org/apply.ts';
import { applyOrgFileWith } from './kernel/org/apply.ts';
import type { ReferencedFiles } from './kernel/org/referenced-files.ts';
import { readReferencedFilesWith } from './kernel/org/referenced-files.ts';
import type { OrgFileParts } from './kernel/org/section.ts';
import { DIRECTORY_SECTIONS } from './kernel/org/sections/index.ts';

/**
 * The org file of this gateway: the directory's sections and every product's, in the order they
 * are planned and applied (docs/org-file.md). A section may name what an earlier one declares:
 * teams, Alignbase's grants and routes and Company Brain's relations name the directory's people
 * and agents, Knowledge Bases their team, grants and routes the groups and the context resources
 * Alignbase's earlier sections declare. A product's new section goes into its own list; a new
 * product's list goes here.
 */
export const ORG_FILE: OrgFileParts = {
  sections: [...DIRECTORY_SECTIONS, ...ATMINA_ORG_SECTIONS, ...ALIGNBASE_ORG_SECTIONS, brainSection],
  // The directory's part of the Company Brain graph follows every apply, through the outbox.
  hooks: [orgGraphApplyHook],
};

/** Applies an org file with this gateway's sections and hooks (applyOrgFileWith). */
export const applyOrgFile: OrgFileApplier = (db, input, audit) => applyOrgFileWith(ORG_FILE, db, input, audit);

/** Reads what this gateway's org file names with `file:`, `dir:` and `files_from:` (readReferencedFilesWith), for `kgw apply`. */
export const readReferencedFiles = (source: string, folder: string): Promise<ReferencedFiles> => readReferencedFilesWith(ORG_FILE.sections, source, folder);
