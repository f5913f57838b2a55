import { z } from 'zod';
import type { ImportedFromWire } from '../kernel/imports/provenance.ts';

/**
 * `imported_from`, beside a version in the reads of every dialect that keeps versions: where
 * kgw import mcp brought the version from, as that source said (docs/migration.md). Absent for
 * a version written here, so a reply about one is what the dialect's specification shows.
 */
export const importedFromField = {
  imported_from: z
    .object({
      source: z.string(),
      source_id: z.string(),
      source_version: z.number().int(),
      author: z.string().nullable(),
      at: z.string().nullable(),
    })
    .optional()
    .describe('Where an import brought this version from: the source endpoint, the id, version, author and time there. Absent for a version written here.'),
};

/** The field to spread into a reply: present only for an imported version. */
export const importedFromWire = (value: ImportedFromWire | undefined): { imported_from?: ImportedFromWire } =>
  value === undefined ? {} : { imported_from: value };
