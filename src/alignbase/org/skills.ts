import { sameManifest, storeFiles } from '../context/manifests.ts';
import type { AttachmentInput, PackageFile, ValidatedPackage } from '../context/skill-package.ts';
import { PACKAGE_MAX_FILES, SKILL_PACKAGE_ERROR_PREFIX, validatePackage } from '../context/skill-package.ts';
import type { AttachmentEntry } from '../versions/queries.ts';
import { isKgwError } from '../../kernel/errors.ts';
import { CONTEXT_RESOURCES, resourceKey } from './resource-index.ts';
import { quotePath } from '../../kernel/org/referenced-files.ts';
import type { PlannedStep } from '../../kernel/org/section.ts';
import { defineSection, DuplicateCheck, readEntries } from '../../kernel/org/section.ts';
import type { Located, YamlReader } from '../../kernel/org/yaml-reader.ts';
import { appliedToHeads, contentHash } from './applied-content.ts';
import { decodeBase64, lookUpFolder, readReference, utf8Text } from '../../kernel/org/file-entries.ts';
import type { Dates } from './context-content.ts';
import { DATE_KEYS, createSteps, latestVersions, loadHeads, readDates, readPublish, updateSteps } from './context-content.ts';

interface SkillSpec {
  readonly dir: Located;
  readonly pkg: ValidatedPackage;
  readonly manifest: readonly AttachmentEntry[];
  readonly publish: boolean;
  readonly dates: Dates;
}

const SKILL_MD = 'SKILL.md';

/**
 * What the file says of a Skill's content, as recorded in org_applied_content: SKILL.md and
 * each file's path, bytes and media type, in path order.
 */
function skillHash(skillMd: string, manifest: readonly AttachmentEntry[]): string {
  const files = [...manifest].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)).map((entry) => [entry.path, entry.sha256, entry.mediaType]);
  return contentHash(JSON.stringify([skillMd, files]));
}

/**
 * `skills:` — Alignbase Skills, each read from a folder next to the org file that holds its
 * SKILL.md and files; the Skill is identified by the name in SKILL.md's frontmatter, which
 * must also be the folder's name. The file saves one new version only when its package changed
 * since it last applied it and differs from the latest version (a newer version an agent wrote
 * or a reviewer accepted stays otherwise: updateSteps); the files' bytes go to the blob store
 * before (never in a dry run). Skills the file does not list are left alone, and nothing is
 * ever unpublished.
 */
export const skillsSection = defineSection<SkillSpec[]>({
  key: 'skills',
  files: { key: 'dir', kind: 'folder', maxFiles: { files: PACKAGE_MAX_FILES, why: `a Skill is at most ${PACKAGE_MAX_FILES} files, SKILL.md included` } },
  references: [CONTEXT_RESOURCES],
  blobFiles: 'the Skill files',

  read(slot, context) {
    const { reader } = context;
    const duplicates = new DuplicateCheck('skill');
    return readEntries(slot, context, (item) => {
      const fields = reader.fields(item, ['dir', 'publish', ...DATE_KEYS], ['dir']);
      if (!fields) return undefined;
      const dirSlot = fields.get('dir');
      const dir = dirSlot && readReference(dirSlot, reader);
      // A Skill is named after its folder (checked below), so grants can name it even when its package has a problem.
      const folderName = dir?.value.slice(dir.value.lastIndexOf('/') + 1);
      if (dir && folderName !== undefined) context.declaredOf(CONTEXT_RESOURCES).add(resourceKey('skill', folderName));
      const files = dir && lookUpFolder(dir, context.files, reader);
      const pkg = dir && files && readPackage(dir, files, reader);
      const publish = readPublish(fields, reader);
      const dates = readDates(fields, reader);
      if (!dir || folderName === undefined || !duplicates.first({ ...dir, value: folderName }, reader)) return undefined;
      if (!pkg || publish === undefined || dates === undefined) return undefined;
      return { dir, pkg, manifest: pkg.files.map(manifestEntry), publish, dates };
    });
  },

  async plan(specs, context) {
    const { tx, tenant, problems, blob } = context;
    // Skill names are unique in the tenant whatever the status, so archived ones are found too.
    const heads = await loadHeads(
      tx,
      tenant.id,
      'skill',
      specs.map((spec) => spec.pkg.name),
      { archived: true },
    );
    const latestOf = await latestVersions(tx, tenant.id, heads);
    const applied = await appliedToHeads(tx, tenant.id, [...heads.values()].flat(), (version) => skillHash(version.content, version.attachments));
    const steps: PlannedStep[] = [];
    for (const spec of specs) {
      const { pkg } = spec;
      const name = pkg.name;
      const head = heads.get(name)?.[0];
      const store = (files: readonly PackageFile[]) => async (): Promise<void> => {
        if (!blob) throw new Error('applyOrgFile: a skills section needs a blob store');
        await storeFiles(blob, files);
      };
      const version = { content: pkg.skillMd, name, description: pkg.description, attachments: spec.manifest, createdBy: undefined };
      if (!head) {
        const files = pkg.files.length;
        const details = files > 0 ? [`${files} file${files === 1 ? '' : 's'} besides SKILL.md`] : [];
        steps.push(
          ...createSteps(context, 'skill', name, {
            version,
            sha256: skillHash(pkg.skillMd, spec.manifest),
            dates: spec.dates,
            details,
            publish: spec.publish,
            prepare: files > 0 ? store(pkg.files) : undefined,
          }),
        );
        continue;
      }
      if (head.status !== 'active') {
        problems.add(
          spec.dir.line,
          `${spec.dir.path}: the Skill ${quotePath(name)} is archived in tenant "${tenant.slug}"; the org file does not change archived Skills`,
        );
        continue;
      }
      const previous = latestOf(head);
      const differences = previous === undefined ? ['package set'] : packageChanges(previous.content, previous.attachments, spec);
      // Only bytes the latest version does not hold yet: those it holds are in the store already.
      const held = new Set(previous?.attachments.map((entry) => entry.sha256));
      const fresh = differences.length > 0 ? pkg.files.filter((file) => !held.has(file.sha256)) : [];
      steps.push(
        ...updateSteps(context, 'skill', name, head, {
          differences,
          version,
          dates: spec.dates,
          publish: spec.publish,
          sha256: skillHash(pkg.skillMd, spec.manifest),
          applied: applied.get(head.id),
          prepare: fresh.length > 0 ? store(fresh) : undefined,
        }),
      );
    }
    return steps;
  },
});

const manifestEntry = (file: PackageFile): AttachmentEntry => ({
  path: file.path,
  mediaType: file.mediaType,
  size: file.size,
  sha256: file.sha256,
  digestEncoding: file.digestEncoding,
});

/** What differs from the latest version: SKILL.md, and the files added, changed and removed. */
function packageChanges(skillMd: string, attachments: readonly AttachmentEntry[], spec: SkillSpec): string[] {
  if (skillMd === spec.pkg.skillMd && sameManifest(attachments, spec.manifest)) return [];
  const before = new Map(attachments.map((entry) => [entry.path, entry]));
  const after = new Map(spec.manifest.map((entry) => [entry.path, entry]));
  const added = spec.manifest.filter((entry) => !before.has(entry.path)).map((entry) => entry.path);
  const removed = attachments.filter((entry) => !after.has(entry.path)).map((entry) => entry.path);
  const changed = spec.manifest.filter((entry) => {
    const was = before.get(entry.path);
    return was !== undefined && (was.sha256 !== entry.sha256 || was.mediaType !== entry.mediaType);
  });
  return [
    ...(skillMd === spec.pkg.skillMd ? [] : ['SKILL.md changed']),
    ...(added.length > 0 ? [`added ${added.join(', ')}`] : []),
    ...(changed.length > 0 ? [`changed ${changed.map((entry) => entry.path).join(', ')}`] : []),
    ...(removed.length > 0 ? [`removed ${removed.join(', ')}`] : []),
  ];
}

/**
 * The Skill package of a folder: SKILL.md (UTF-8) and every other file as an attachment,
 * checked by the rules of create_skill. Each problem is reported on the `dir:` line.
 */
function readPackage(
  dir: Located,
  files: readonly { readonly path: string; readonly data_base64: string }[],
  reader: YamlReader,
): ValidatedPackage | undefined {
  const fail = (message: string): undefined => {
    reader.fail(dir, `${dir.path}: ${message}`);
    return undefined;
  };
  const shown = (path: string): string => quotePath(`${dir.value}/${path}`);
  const skillMdFile = files.find((file) => file.path === SKILL_MD);
  if (skillMdFile === undefined) return fail(`${quotePath(dir.value)} holds no ${SKILL_MD}`);
  const bytes = decodeBase64(skillMdFile.data_base64);
  const skillMd = bytes && utf8Text(bytes);
  if (skillMd === undefined) return fail(`${shown(SKILL_MD)} ${bytes === undefined ? 'was not sent as base64' : 'is not UTF-8 text'}`);
  const attachments: AttachmentInput[] = [];
  let ok = true;
  for (const file of files) {
    if (file.path === SKILL_MD) continue;
    // The package rules refuse empty files; say so by the file's name rather than its place in a list.
    if (file.data_base64 === '') {
      fail(`${shown(file.path)} is empty; a Skill's files cannot be empty`);
      ok = false;
    } else attachments.push({ path: file.path, data_base64: file.data_base64 });
  }
  let pkg: ValidatedPackage;
  try {
    pkg = validatePackage({ skillMd, attachments });
  } catch (error) {
    if (!isKgwError(error, 'validation')) throw error;
    return fail(`${quotePath(dir.value)} is not a valid Skill package: ${packageReason(error.message, attachments, dir.value)}`);
  }
  if (!ok) return undefined;
  const folderName = dir.value.slice(dir.value.lastIndexOf('/') + 1);
  if (pkg.name !== folderName) {
    const parent = dir.value.slice(0, dir.value.length - folderName.length);
    return fail(`${shown(SKILL_MD)} names the Skill ${quotePath(pkg.name)}; a Skill's folder must have its name (${parent}${pkg.name})`);
  }
  return pkg;
}

/**
 * A package error as the author of a folder reads it: files by their path next to the org
 * file instead of their place in the attachment list, SKILL.md instead of `skill_md`.
 */
function packageReason(message: string, attachments: readonly AttachmentInput[], dir: string): string {
  const reason = message.startsWith(SKILL_PACKAGE_ERROR_PREFIX) ? message.slice(SKILL_PACKAGE_ERROR_PREFIX.length) : message;
  const quoted = String.raw`"(?:[^"\\]|\\.)*"`;
  const place = new RegExp(String.raw`attachments\[(\d+)\](?:\.path ${quoted}|\.data_base64 \(${quoted}\)| \(${quoted}\)|\.path|\.data_base64)?`, 'g');
  return reason
    .replace(place, (whole, index: string) => {
      const attachment = attachments[Number(index)];
      return attachment === undefined ? whole : quotePath(`${dir}/${attachment.path}`);
    })
    .replace(/\bskill_md\b/g, SKILL_MD);
}
