import { readFileSync } from 'node:fs';
import { SharedRateLimiter } from '../../auth/shared-rate.ts';
import type { Config } from '../../config.ts';
import type { ConsolePerson, ConsoleSection, SectionAnswer, SectionRequest, SectionRoute } from '../../console/contract.ts';
import { CONSOLE_PATH } from '../../console/page.ts';
import type { Lang } from '../../console/text.ts';
import { SHELL, count, fill } from '../../console/text.ts';
import { diffView, pageOf, readable, textView, timeView } from '../../console/views.ts';
import type { SafeHtml } from '../../http/pages/html.ts';
import { html } from '../../http/pages/html.ts';
import { validation } from '../../kernel/errors.ts';
import { unifiedDiff } from '../../kernel/unified-diff.ts';
import { unstorableText } from '../../kernel/text.ts';
import { QUERY_TEXT_MAX_CHARS } from '../../search-text/query.ts';
import { SNIPPET_MARK } from '../../search-text/snippets.ts';
import { kbAllows } from '../access/team-roles.ts';
import { assetRendition } from '../dialect/asset-rendition.ts';
import { kbWritesLimiter } from '../dialect/rate-limiters.ts';
import type { KbWithAccess } from '../kb/access.ts';
import { kbFor } from '../kb/access.ts';
import { fileHistory, listFiles } from '../kb/catalog.ts';
import { encodeCursor } from '../kb/cursor.ts';
import { hasRendition, readOriginal } from '../kb/download-links.ts';
import { KB_TEXT_MAX_BYTES, findFile, headBytes, parseRef, readFile, restoreVersion } from '../kb/files.ts';
import { listKbs } from '../kb/kbs.ts';
import type { KbFile, KbFileVersion } from '../kb/queries.ts';
import { parseFrontMatter } from '../kb/text/front-matter.ts';
import type { UploadDeclaration } from '../kb/upload-batches.ts';
import { confirmUploads, requestUploads } from '../kb/upload-batches.ts';
import type { SearchPageHit } from '../search.ts';
import { searchKbs } from '../search.ts';
import type { SearchedContent } from '../searched-content.ts';
import { WIKI_LINK, renderMarkdown } from './markdown.ts';
import { resolveReferences } from '../kb/graph-links.ts';
import { LINKS_MAX } from '../kb/text/links.ts';
import { wikiReference } from '../kb/text/references.ts';
import { K, OPERATIONS, UPLOAD_MESSAGES } from './texts.ts';

/**
 * The console's Knowledge Bases section (docs/console.md, "Knowledge Bases"): the KBs a person
 * may use, their folders and files, a file shown (Markdown rendered safely), its history with
 * the changes of each version and, for Editors, restoring one; search; and uploads by drag and
 * drop through the presigned batches agents use. Every page goes through Atmina's own core
 * functions (src/atmina/kb) as the signed-in person, so the console decides nothing the tools
 * would not: a KB the person may not see, and another tenant's, is `not_found` like an unknown
 * one; a Viewer's restore or upload is refused as the tool refuses it.
 */

/** KBs on one page of the list, and the deepest page (README, Hardening). */
export const KBS_PAGE_SIZE = 50;
export const KBS_PAGES_MAX = 1000;
/** Files on one page of a folder (list_files' limit), versions on one page of a history, results on one page of a search (README, Hardening). */
export const FOLDER_PAGE_SIZE = 100;
export const HISTORY_PAGE_SIZE = 20;
export const SEARCH_PAGE_SIZE = 10;
/** The longest path, folder or page cursor a console address may carry (README, Hardening). */
export const KBS_ADDRESS_TEXT_MAX_CHARS = 2048;
/** The largest text shown or compared on a page; a larger file is offered as a download (README, Hardening). */
export const KBS_SHOWN_MAX_BYTES = KB_TEXT_MAX_BYTES;
/** Files one upload request of the page's script declares: well within the console's 64 KiB form (README, Hardening). */
export const KBS_UPLOAD_FILES_MAX = 10;

const ID = 'kbs';
const SCRIPT = 'kb-upload.js';

const baseOf = (who: ConsolePerson): string => `${who.services.config.publicUrl}${CONSOLE_PATH}/${ID}`;

/** The section's address of a KB page, with its query (empty values left out). */
function address(who: ConsolePerson, kbId: string | undefined, page: string, query: Readonly<Record<string, string | undefined>> = {}): string {
  const params = new URLSearchParams(Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''));
  const search = params.size === 0 ? '' : `?${params.toString()}`;
  return `${baseOf(who)}${kbId === undefined ? '' : `/${encodeURIComponent(kbId)}`}${page}${search}`;
}

/** A query field within its bound and storable (a query string is not a form the shell checked). */
function queryText(query: URLSearchParams, name: string, max = KBS_ADDRESS_TEXT_MAX_CHARS): string {
  const value = query.get(name) ?? '';
  if ([...value].length > max) throw validation(`${name} is longer than ${max} characters`);
  const problem = unstorableText(value);
  if (problem !== undefined) throw validation(`${name} ${problem}`);
  return value;
}

/** A version number of a form or address. */
function versionOf(text: string | null): number {
  if (text === null || !/^\d{1,9}$/.test(text) || Number(text) < 1) throw validation('version must be a whole number from 1');
  return Number(text);
}

/** A form field of a POST (the shell checked the form: storable, UTF-8, the session's). */
function field(request: SectionRequest, name: string, max = KBS_ADDRESS_TEXT_MAX_CHARS): string {
  // The shell hands a POST its checked form; a POST route without one is a programming error.
  if (request.form === undefined) throw new Error('kbs: a POST without its form');
  const value = request.form.get(name) ?? '';
  if ([...value].length > max) throw validation(`${name} is longer than ${max} characters`);
  return value;
}

/** A byte count as people read it. */
function size(lang: Lang, bytes: number): string {
  if (bytes < 1024) return `${count(lang, bytes)} B`;
  if (bytes < 1024 * 1024) return `${count(lang, Math.round(bytes / 102.4) / 10)} KiB`;
  return `${count(lang, Math.round(bytes / (1024 * 102.4)) / 10)} MiB`;
}

const nameOf = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

/**
 * The console's writes (restores, upload requests and confirmations) per person a minute, at
 * the tools' KB write rate (KGW_KB_WRITES_PER_MINUTE) and with its refusal (429): a person's
 * console counts apart from their agents' calls, in the store every replica shares, as the
 * tools' limiter does.
 */
const consoleWrites = new WeakMap<Config, SharedRateLimiter>();

async function spendWrite(who: ConsolePerson): Promise<void> {
  const { config, db } = who.services;
  let limiter = consoleWrites.get(config);
  if (limiter === undefined) consoleWrites.set(config, (limiter = new SharedRateLimiter(db, 'console_kb_writes', kbWritesLimiter.perMinute(config), 60_000)));
  const wait = await limiter.take(`${who.caller.tenant.id}:${who.caller.principal.id}`);
  if (wait !== undefined) throw kbWritesLimiter.refusal(wait);
}

/** Reads are audited as the tools' are: one event per page, naming what it showed. */
async function audited(who: ConsolePerson, action: string): Promise<void> {
  who.audit.readAs(action);
  await who.audit.finish({ ok: true });
}

/** Where the person is: the KBs, the KB, each folder down to `path` (a folder ending in '/', or a file). */
function breadcrumbs(who: ConsolePerson, kb: KbWithAccess, path: string): SafeHtml {
  const { lang } = who;
  const segments = path.split('/').filter((segment) => segment !== '');
  const folders = path.endsWith('/') || path === '' ? segments : segments.slice(0, -1);
  const crumbs: SafeHtml[] = [html`<li><a href="${address(who, undefined, '')}">${K.section[lang]}</a></li>`];
  crumbs.push(html`<li><a href="${address(who, kb.kb.id, '')}">${readable(kb.kb.name)}</a></li>`);
  folders.forEach((segment, n) => {
    crumbs.push(html`<li><a href="${address(who, kb.kb.id, '', { path: `${folders.slice(0, n + 1).join('/')}/` })}">${readable(segment)}</a></li>`);
  });
  return html`<nav class="crumbs" aria-label="${K.breadcrumbs[lang]}"><ol>${crumbs}</ol></nav>`;
}

function searchForm(who: ConsolePerson, kbId: string | undefined, query = ''): SafeHtml {
  const { lang } = who;
  const label = kbId === undefined ? K.searchAll[lang] : K.searchKb[lang];
  return html`<form class="filters" method="get" action="${address(who, undefined, '/search')}" role="search">
${kbId === undefined ? '' : html`<input type="hidden" name="kb" value="${kbId}">`}
<label>${label} <input name="q" type="search" value="${query}" maxlength="${QUERY_TEXT_MAX_CHARS}" required placeholder="${K.query[lang]}"></label>
<button type="submit" class="secondary">${K.search[lang]}</button>
</form>`;
}

// ---------------------------------------------------------------------------------------------
// The KBs

async function kbsPage(who: ConsolePerson, request: SectionRequest): Promise<SectionAnswer> {
  const { lang } = who;
  const page = pageOf(request.query, KBS_PAGES_MAX);
  const kbs = await listKbs(who.services.db, who.caller);
  const shown = kbs.slice((page - 1) * KBS_PAGE_SIZE, page * KBS_PAGE_SIZE);
  const row = ({ kb, access }: KbWithAccess): SafeHtml => html`<tr>
<td>${kbAllows(access, 'viewer') ? html`<a href="${address(who, kb.id, '')}">${readable(kb.name)}</a>` : readable(kb.name)}${
    kb.description === '' ? '' : html`<br><span class="note">${readable(kb.description)}</span>`
  }</td>
<td><code>${kb.slug}</code></td>
<td>${readable(kb.team.name)}</td>
<td>${access === 'search' ? html`<span class="badge">${K.searchOnly[lang]}</span>` : K[access][lang]}</td>
</tr>`;
  return {
    page: {
      title: K.section[lang],
      body: html`<h1>${K.section[lang]}</h1>
<p class="lead">${K.lead[lang]}</p>
${searchForm(who, undefined)}
${
  shown.length === 0
    ? html`<p class="empty">${K.noKbs[lang]}</p>`
    : html`<div class="scroll"><table class="list">
<thead><tr><th scope="col">${K.name[lang]}</th><th scope="col">${K.slug[lang]}</th><th scope="col">${K.team[lang]}</th><th scope="col">${K.role[lang]}</th></tr></thead>
<tbody>${shown.map(row)}</tbody>
</table></div>`
}
${pager(lang, page > 1 ? address(who, undefined, '', { page: String(page - 1) }) : undefined, kbs.length > page * KBS_PAGE_SIZE ? address(who, undefined, '', { page: String(page + 1) }) : undefined)}`,
    },
  };
}

function pager(lang: Lang, previous: string | undefined, next: string | undefined, first?: string): SafeHtml | string {
  if (previous === undefined && next === undefined && first === undefined) return '';
  return html`<nav class="pager" aria-label="${SHELL.pages[lang]}">
${first === undefined ? '' : html`<a href="${first}">${K.first[lang]}</a>`}
${previous === undefined ? '' : html`<a href="${previous}" rel="prev">${SHELL.previous[lang]}</a>`}
${next === undefined ? '' : html`<a href="${next}" rel="next">${SHELL.next[lang]}</a>`}
</nav>`;
}

// ---------------------------------------------------------------------------------------------
// A folder

async function folderPage(who: ConsolePerson, request: SectionRequest): Promise<SectionAnswer> {
  const { lang } = who;
  const kbParam = request.params['kb'] ?? '';
  const given = queryText(request.query, 'path');
  // A folder is named with its slash; one named without is the same folder.
  const folder = given === '' || given.endsWith('/') ? given : `${given}/`;
  const cursor = queryText(request.query, 'cursor');
  const listed = await listFiles(
    who.services.db,
    who.caller,
    { kbId: kbParam, pathPrefix: folder, limit: FOLDER_PAGE_SIZE, ...(cursor === '' ? {} : { cursor }) },
    who.audit,
  );
  const { kb } = listed.kb;
  // The page's files directly in the folder, and the folders below it that its other files are in.
  const folders = new Set<string>();
  const files: KbFile[] = [];
  for (const file of listed.files) {
    const rest = file.path.slice(folder.length);
    const slash = rest.indexOf('/');
    if (slash === -1) files.push(file);
    else folders.add(rest.slice(0, slash));
  }
  const fileRow = (file: KbFile): SafeHtml => html`<tr>
<td><a href="${address(who, kb.id, '/file', { path: file.path })}">${readable(nameOf(file.path))}</a></td>
<td>${file.mediaType}</td>
<td>${size(lang, file.sizeBytes)}</td>
<td>${timeView(lang, file.updatedAt)}</td>
<td><a href="${address(who, kb.id, '/history', { path: file.path })}" aria-label="${K.history[lang]}: ${readable(nameOf(file.path))}">${K.history[lang]}</a></td>
</tr>`;
  const editor = kbAllows(listed.kb.access, 'editor');
  const title = folder === '' ? readable(kb.name) : `${readable(kb.name)}: ${readable(folder)}`;
  return {
    page: {
      title,
      body: html`${breadcrumbs(who, listed.kb, folder)}
<h1>${title}</h1>
${kb.description === '' ? '' : html`<p class="lead">${readable(kb.description)}</p>`}
${searchForm(who, kb.id)}
${
  folders.size === 0
    ? ''
    : html`<h2>${K.folders[lang]}</h2>
<ul class="folders">${[...folders].map(
        (name) => html`<li><a href="${address(who, kb.id, '', { path: `${folder}${name}/` })}">${readable(name)}/</a></li>`,
      )}</ul>`
}
<h2>${K.files[lang]}</h2>
${
  files.length === 0
    ? html`<p class="empty">${K.emptyFolder[lang]}</p>`
    : html`<div class="scroll"><table class="list">
<thead><tr><th scope="col">${K.name[lang]}</th><th scope="col">${K.type[lang]}</th><th scope="col">${K.size[lang]}</th><th scope="col">${K.updated[lang]}</th><th scope="col">${K.history[lang]}</th></tr></thead>
<tbody>${files.map(fileRow)}</tbody>
</table></div>`
}
${pager(
  lang,
  undefined,
  listed.nextCursor === undefined ? undefined : address(who, kb.id, '', { path: folder, cursor: listed.nextCursor }),
  cursor === '' ? undefined : address(who, kb.id, '', { path: folder }),
)}
${editor ? uploadForm(who, kb.id, folder, request.csrf) : ''}`,
    },
  };
}

/**
 * The upload form: a real file input the script (static/kb-upload.js) augments with a drop
 * zone, hashing and the presigned PUTs. Without the script the form says what it needs.
 */
function uploadForm(who: ConsolePerson, kbId: string, folder: string, csrf: string): SafeHtml {
  const { lang } = who;
  const messages = Object.entries(UPLOAD_MESSAGES).map(([key, text]) => html` data-message-${key}="${text[lang]}"`);
  return html`<h2 id="upload-heading">${K.upload[lang]}</h2>
<form class="upload" method="post" action="${address(who, kbId, '/uploads')}" aria-labelledby="upload-heading" data-upload data-confirm="${address(who, kbId, '/uploads/confirm')}" data-folder="${folder}" data-reload="${address(who, kbId, '', { path: folder })}" data-batch-max="${String(KBS_UPLOAD_FILES_MAX)}"${messages}>
<input type="hidden" name="csrf" value="${csrf}">
<p class="note" id="upload-lead">${K.uploadLead[lang]}</p>
<div class="dropzone" data-dropzone>
<label>${K.chooseFiles[lang]} <input type="file" name="files" multiple aria-describedby="upload-lead"></label>
</div>
<p class="note" data-no-script>${K.needsScript[lang]}</p>
<div class="actions"><button type="submit" hidden data-upload-button>${K.uploadButton[lang]}</button></div>
<div role="status" aria-live="polite" aria-label="${K.uploadStatus[lang]}" data-upload-status></div>
</form>`;
}

// ---------------------------------------------------------------------------------------------
// A file

/** The file at `?path=` of the KB, for a Viewer (as read_file decides), without reading its bytes. */
async function viewedFile(who: ConsolePerson, request: SectionRequest): Promise<{ kb: KbWithAccess; file: KbFile }> {
  const path = queryText(request.query, 'path');
  const kb = await kbFor(who.services.db, who.caller, request.params['kb'] ?? '', 'viewer', 'reading files');
  const file = await findFile(who.services.db, who.caller.tenant.id, kb.kb.id, parseRef({ path }));
  return { kb, file };
}

const isMarkdown = (file: KbFile): boolean => file.mediaType === 'text/markdown';

async function filePage(who: ConsolePerson, request: SectionRequest): Promise<SectionAnswer> {
  const { lang } = who;
  const { kb, file } = await viewedFile(who, request);
  const kbId = kb.kb.id;
  const links = html`<p class="actions">
<a href="${address(who, kbId, '/history', { path: file.path })}">${K.history[lang]}</a>
<a href="${address(who, kbId, '/raw', { path: file.path })}">${K.download[lang]}</a>
</p>`;
  const facts = html`<p class="note">${file.mediaType} · ${size(lang, file.sizeBytes)} · ${K.version[lang]} ${String(file.version)} · ${timeView(lang, file.updatedAt)}</p>`;
  let content: SafeHtml;
  if (file.kind === 'text' && file.sizeBytes > KBS_SHOWN_MAX_BYTES) {
    content = html`<p class="note">${fill(K.tooLarge[lang], { size: size(lang, KBS_SHOWN_MAX_BYTES) })}</p>`;
    who.audit.touch({ type: 'kb_file', id: file.id, version: file.version });
  } else {
    const read = await readFile(who.services, who.caller, { kbId, path: file.path }, who.audit);
    if (read.file.kind === 'asset') {
      const image = hasRendition(read.asset)
        ? html`<figure><img class="kb-image" src="${address(who, kbId, '/image', { path: file.path, v: String(read.file.version) })}" alt="${fill(K.image[lang], { path: readable(file.path) })}"></figure>`
        : read.asset === undefined
          ? html`<p class="note">${K.binary[lang]}</p>`
          : '';
      content = html`${image}${
        read.asset === undefined
          ? ''
          : html`<h2>${K.companion[lang]}</h2>${read.content === '' ? html`<p class="empty">${K.noCompanion[lang]}</p>` : textView(read.content, K.companion[lang])}`
      }`;
    } else if (isMarkdown(read.file)) {
      content = await markdownView(who, kbId, read.file.path, read.content);
    } else content = textView(read.content.replace(/\r\n?/g, '\n'), K.content[lang]);
  }
  await audited(who, 'kb.file.read');
  return {
    page: {
      title: readable(nameOf(file.path)),
      body: html`${breadcrumbs(who, kb, file.path)}
<h1>${readable(nameOf(file.path))}</h1>
${facts}
${links}
${content}`,
    },
  };
}

/**
 * The KB path each wiki link of a text names, resolved as `related` resolves it (the graph's
 * live files of this KB): at most LINKS_MAX distinct ones, as a file's links are read.
 */
async function wikiTargets(who: ConsolePerson, kbId: string, path: string, text: string): Promise<Map<string, string>> {
  const inners = [...new Set(Array.from(text.matchAll(WIKI_LINK), (match) => match[1] ?? ''))].slice(0, LINKS_MAX);
  const named = inners.flatMap((inner) => {
    const reference = wikiReference(inner, path, 'wiki');
    return reference === undefined ? [] : [{ inner, reference }];
  });
  const files = await resolveReferences(
    who.services.graph.kbLinks(),
    { tenantId: who.tenant.id, kbId },
    named.map((entry) => entry.reference),
  );
  const found = new Map<string, string>();
  for (const [index, entry] of named.entries()) {
    const file = files[index];
    if (file !== undefined) found.set(entry.inner, file.path);
  }
  return found;
}

/** A Markdown file: its front matter's title and tags as facts, its body rendered (markdown.ts). */
async function markdownView(who: ConsolePerson, kbId: string, path: string, text: string): Promise<SafeHtml> {
  const { lang } = who;
  const front = parseFrontMatter(text);
  const body =
    front.status === 'parsed'
      ? text
          .split('\n')
          .slice(front.bodyLine - 1)
          .join('\n')
      : text;
  const facts =
    front.status === 'parsed' && (front.title !== undefined || front.tags.length > 0)
      ? html`<dl class="facts">
${front.title === undefined ? '' : html`<dt>${K.title[lang]}</dt><dd>${readable(front.title)}</dd>`}
${front.tags.length === 0 ? '' : html`<dt>${K.tags[lang]}</dt><dd>${front.tags.map(readable).join(', ')}</dd>`}
</dl>`
      : '';
  const wiki = await wikiTargets(who, kbId, path, body);
  return html`${facts}${renderMarkdown(body, path, {
    file: (target) => address(who, kbId, '/file', { path: target }),
    folder: (target) => address(who, kbId, '', { path: target }),
    image: (target) => address(who, kbId, '/image', { path: target }),
    wiki: (inner) => {
      const target = wiki.get(inner);
      return target === undefined ? undefined : address(who, kbId, '/file', { path: target });
    },
  })}`;
}

/** The file's original bytes, as a download: through the download link's own reader (access checked again). */
async function rawAnswer(who: ConsolePerson, request: SectionRequest): Promise<SectionAnswer> {
  const { kb, file } = await viewedFile(who, request);
  const original = await readOriginal(
    who.services,
    who.caller,
    { tenantId: who.caller.tenant.id, kbId: kb.kb.id, fileId: file.id, version: file.version, principalId: who.caller.principal.id },
    who.audit,
  );
  await audited(who, 'kb.file.download');
  // A type that is not a plain `type/subtype` is not sent as given: the bytes are saved, never shown.
  const type = /^[\w.+-]+\/[\w.+-]+$/.test(original.mediaType) ? original.mediaType : 'application/octet-stream';
  return { download: { name: nameOf(original.path), type, body: original.body } };
}

/** An image's medium rendition (read_file's, 1024 px at most, metadata stripped), for <img> on the console's pages. */
async function imageAnswer(who: ConsolePerson, request: SectionRequest): Promise<SectionAnswer> {
  const { kb, file } = await viewedFile(who, request);
  const read = await readFile(who.services, who.caller, { kbId: kb.kb.id, path: file.path }, who.audit);
  const made = read.file.kind === 'asset' ? await assetRendition(who.services, read.file, read.asset) : undefined;
  if (made === undefined) throw validation('this file has no image to show');
  return { download: { name: `${nameOf(file.path)}.${made.mimeType.split('/')[1] ?? 'img'}`, type: made.mimeType, body: made.data } };
}

// ---------------------------------------------------------------------------------------------
// History

async function historyPage(who: ConsolePerson, request: SectionRequest): Promise<SectionAnswer> {
  const { lang } = who;
  const path = queryText(request.query, 'path');
  const cursor = queryText(request.query, 'cursor');
  const history = await fileHistory(
    who.services.db,
    who.caller,
    { kbId: request.params['kb'] ?? '', path, limit: HISTORY_PAGE_SIZE, ...(cursor === '' ? {} : { cursor }) },
    who.audit,
  );
  const { file } = history;
  const kbId = history.kb.kb.id;
  const editor = kbAllows(history.kb.access, 'editor');
  const row = (version: KbFileVersion): SafeHtml => {
    const head = version.version === file.version;
    const restorable = editor && !head && version.sha256 !== file.sha256 && version.operation !== 'delete';
    return html`<tr>
<td>${String(version.version)}${head ? html` <span class="badge">${K.current[lang]}</span>` : ''}</td>
<td>${OPERATIONS[version.operation][lang]}${version.restoredFrom === undefined ? '' : html`<br><span class="note">${fill(K.restoredFrom[lang], { version: String(version.restoredFrom) })}</span>`}</td>
<td>${version.author === undefined ? K.removed[lang] : readable(version.author.name)}</td>
<td>${timeView(lang, version.createdAt)}</td>
<td>${size(lang, version.sizeBytes)}</td>
<td><a href="${address(who, kbId, '/diff', { path: file.path, version: String(version.version) })}" aria-label="${fill(K.changesOf[lang], { version: String(version.version) })}">${K.changes[lang]}</a></td>
${
  editor
    ? html`<td>${
        restorable
          ? html`<form method="post" action="${address(who, kbId, '/restore')}">
<input type="hidden" name="csrf" value="${request.csrf}">
<input type="hidden" name="path" value="${file.path}">
<input type="hidden" name="version" value="${String(version.version)}">
<input type="hidden" name="if_match" value="${file.sha256}">
<button type="submit" class="secondary" aria-label="${fill(K.restoreVersion[lang], { version: String(version.version) })}">${K.restore[lang]}</button>
</form>`
          : ''
      }</td>`
    : ''
}
</tr>`;
  };
  const title = fill(K.historyOf[lang], { path: readable(file.path) });
  return {
    page: {
      title,
      body: html`${breadcrumbs(who, history.kb, file.path)}
<h1>${title}</h1>
<p class="actions"><a href="${address(who, kbId, '/file', { path: file.path })}">${K.view[lang]}</a></p>
${editor ? html`<p class="note">${K.restoreLead[lang]}</p>` : ''}
<div class="scroll"><table class="list">
<thead><tr><th scope="col">${K.version[lang]}</th><th scope="col">${K.operation[lang]}</th><th scope="col">${K.author[lang]}</th><th scope="col">${K.when[lang]}</th><th scope="col">${K.size[lang]}</th><th scope="col">${K.diff[lang]}</th>${
        editor ? html`<th scope="col">${K.restore[lang]}</th>` : ''
      }</tr></thead>
<tbody>${history.versions.map(row)}</tbody>
</table></div>
${pager(
  lang,
  undefined,
  history.nextCursor === undefined ? undefined : address(who, kbId, '/history', { path: file.path, cursor: history.nextCursor }),
  cursor === '' ? undefined : address(who, kbId, '/history', { path: file.path }),
)}`,
    },
  };
}

/** A version's text, when it is UTF-8 of at most KBS_SHOWN_MAX_BYTES. */
async function versionText(who: ConsolePerson, version: KbFileVersion): Promise<string | undefined> {
  if (version.sizeBytes > KBS_SHOWN_MAX_BYTES) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(await headBytes(who.services.blob, version));
  } catch (error) {
    if (error instanceof TypeError) return undefined;
    throw error;
  }
}

/** What a version changed against the one before it, as a unified diff (file_history gives both, as the person may read them). */
async function diffPage(who: ConsolePerson, request: SectionRequest): Promise<SectionAnswer> {
  const { lang } = who;
  const path = queryText(request.query, 'path');
  const version = versionOf(request.query.get('version'));
  const kbParam = request.params['kb'] ?? '';
  const head = await fileHistory(who.services.db, who.caller, { kbId: kbParam, path, limit: 1 }, who.audit);
  if (version > head.file.version) throw validation(`the file has no version ${version}`);
  // The page of the history that starts at this version: it and the one before it.
  const pair = await fileHistory(who.services.db, who.caller, { kbId: kbParam, path, limit: 2, cursor: encodeCursor(head.file.id, [version + 1]) }, who.audit);
  const [to, from] = pair.versions;
  if (to === undefined) throw validation(`the file has no version ${version}`);
  const kbId = head.kb.kb.id;
  let shown: SafeHtml;
  if (from === undefined) shown = html`<p class="note">${K.firstVersion[lang]}</p>`;
  else {
    const [before, after] = await Promise.all([versionText(who, from), versionText(who, to)]);
    if (before === undefined || after === undefined || head.file.kind !== 'text')
      shown = html`<p class="note">${fill(K.notComparable[lang], { size: size(lang, KBS_SHOWN_MAX_BYTES) })}</p>`;
    else {
      const diff = unifiedDiff(before.replace(/\r\n?/g, '\n'), after.replace(/\r\n?/g, '\n'), {
        from: `${from.path} (${K.version[lang]} ${from.version})`,
        to: `${to.path} (${K.version[lang]} ${to.version})`,
      });
      shown = diff === '' ? html`<p class="note">${K.noChanges[lang]}</p>` : diffView(diff, K.diff[lang]);
    }
  }
  const title = fill(K.changesOf[lang], { version: String(version) });
  return {
    page: {
      title,
      body: html`${breadcrumbs(who, head.kb, head.file.path)}
<h1>${title}</h1>
<p class="lead">${fill(K.changesLead[lang], { version: String(version), path: readable(head.file.path) })}</p>
<p class="actions"><a href="${address(who, kbId, '/history', { path: head.file.path })}">${K.history[lang]}</a></p>
${shown}`,
    },
  };
}

/** restore_version as the person: an Editor's restore is saved as a new version; anyone else's is refused by the core, as the tool's is. */
async function restoreAnswer(who: ConsolePerson, request: SectionRequest): Promise<SectionAnswer> {
  await spendWrite(who);
  const path = field(request, 'path');
  const restored = await restoreVersion(
    who.services,
    who.caller,
    { kbId: request.params['kb'] ?? '', path, version: versionOf(field(request, 'version')), ifMatch: field(request, 'if_match', 64) },
    who.audit,
  );
  return { redirect: address(who, restored.file.kbId, '/history', { path: restored.file.path }) };
}

// ---------------------------------------------------------------------------------------------
// Uploads: the presigned batches agents use (request_uploads, PUT, confirm_uploads)

const json = (value: unknown): SectionAnswer => ({ download: { name: 'answer.json', type: 'application/json; charset=utf-8', body: JSON.stringify(value) } });

/** request_uploads as the person, from the script's form: `count`, then `path<n>`, `size<n>`, `sha256<n>`, `type<n>` for each file. */
async function requestAnswer(who: ConsolePerson, request: SectionRequest): Promise<SectionAnswer> {
  await spendWrite(who);
  const n = Number(field(request, 'count', 3));
  if (!Number.isSafeInteger(n) || n < 1 || n > KBS_UPLOAD_FILES_MAX) throw validation(`count must be a whole number from 1 to ${KBS_UPLOAD_FILES_MAX}`);
  const items: UploadDeclaration[] = [];
  for (let i = 0; i < n; i += 1) {
    const sizeText = field(request, `size${i}`, 20);
    if (!/^\d{1,15}$/.test(sizeText)) throw validation(`size${i} must be a whole number of bytes`);
    const type = field(request, `type${i}`, 255);
    items.push({
      path: field(request, `path${i}`),
      sizeBytes: Number(sizeText),
      sha256: field(request, `sha256${i}`, 64),
      ...(type === '' ? {} : { mimeType: type }),
    });
  }
  const batch = await requestUploads(
    who.services,
    who.caller,
    { kbId: request.params['kb'] ?? '', items, urlSeconds: who.services.config.uploadUrlSeconds },
    who.audit,
  );
  return json({
    batch: batch.batchToken,
    uploads: batch.uploads.map((u) => ({ index: u.index, path: u.path, url: u.url, method: u.method, headers: u.headers })),
    failures: batch.refused.map((r) => ({ index: r.index, path: r.path, error: r.error.message })),
  });
}

/** confirm_uploads as the person: each file's result. */
async function confirmAnswer(who: ConsolePerson, request: SectionRequest): Promise<SectionAnswer> {
  await spendWrite(who);
  const result = await confirmUploads(who.services, who.caller, { kbId: request.params['kb'] ?? '', batchToken: field(request, 'batch', 100) }, who.audit);
  return json({ items: result.items.map((item) => (item.ok ? { path: item.path, ok: true } : { path: item.path, ok: false, error: item.message })) });
}

// ---------------------------------------------------------------------------------------------
// Search

/** A snippet with its matched words marked: the text escaped, only the search's own marks kept. */
function snippetView(snippet: string): SafeHtml {
  const parts = readable(snippet).split(new RegExp(`(${SNIPPET_MARK.open}|${SNIPPET_MARK.close.replace('/', '\\/')})`));
  let marked = false;
  const out: (SafeHtml | string)[] = [];
  for (const part of parts) {
    if (part === SNIPPET_MARK.open) marked = true;
    else if (part === SNIPPET_MARK.close) marked = false;
    else if (part !== '') out.push(marked ? html`<mark>${part}</mark>` : part);
  }
  return html`<p class="snippet">${out}</p>`;
}

/** Why a result matched, as the search tool's `reasons` says it. */
function reasonsView(lang: Lang, hit: SearchPageHit): SafeHtml {
  const reasons: string[] = hit.reasons.terms.map((term) => fill(K.termsIn[lang], { term: term.term, fields: term.fields.join(', ') }));
  const words = [...new Set(hit.reasons.expansionWords ?? hit.reasons.expansions)];
  if (words.length > 0) reasons.push(fill(K.alsoWords[lang], { words: words.join(', ') }));
  if (hit.reasons.phrases.length > 0) reasons.push(fill(K.phrases[lang], { phrases: hit.reasons.phrases.map((p) => `“${p}”`).join(', ') }));
  reasons.push(fill(K.score[lang], { score: hit.score.toFixed(3) }));
  return html`<p class="note"><strong>${K.why[lang]}:</strong> ${readable(reasons.join('; '))}</p>`;
}

function searchAnswer(content: SearchedContent) {
  return async (who: ConsolePerson, request: SectionRequest): Promise<SectionAnswer> => {
    const { lang } = who;
    const query = queryText(request.query, 'q', QUERY_TEXT_MAX_CHARS).trim();
    const kbParam = queryText(request.query, 'kb', 100);
    const cursor = queryText(request.query, 'cursor', 200);
    // Within one KB the person may read: resolved first, so an unknown or hidden one is not found.
    const kb = kbParam === '' ? undefined : await kbFor(who.services.db, who.caller, kbParam, 'viewer', 'searching files');
    const form = searchForm(who, kb?.kb.id, query);
    const crumbs = kb === undefined ? '' : breadcrumbs(who, kb, '');
    if (query === '')
      return { page: { title: K.search[lang], body: html`${crumbs}<h1>${K.results[lang]}</h1>${form}<p class="empty">${K.noResults[lang]}</p>` } };
    const page = await searchKbs(who.services, content, who.caller, {
      query,
      ...(kb === undefined ? {} : { kbIds: [kb.kb.id] }),
      kinds: ['file'],
      maxFiles: SEARCH_PAGE_SIZE,
      ...(cursor === '' ? {} : { cursor }),
    });
    who.audit.detail({ query, results: page.hits.length, total: page.total });
    who.audit.touch(
      ...page.searched.map((id) => ({ type: 'kb', id })),
      ...page.hits.map((h) => (h.kb === undefined ? { type: h.resource.type, id: h.resource.id } : { type: 'kb_file', id: String(h.ref.file_id) })),
    );
    await audited(who, 'kb.search');
    const result = (hit: SearchPageHit): SafeHtml | string => {
      if (hit.kb === undefined) return '';
      const readableKb = kbAllows(hit.kb.access, 'viewer');
      const name = hit.title === '' ? hit.path : `${hit.title} (${hit.path})`;
      return html`<li>
<h3>${readableKb ? html`<a href="${address(who, hit.kb.kb.id, '/file', { path: hit.path })}">${readable(name)}</a>` : readable(name)}</h3>
<p class="note">${readable(hit.kb.kb.name)}</p>
${hit.snippets.map(snippetView)}
${reasonsView(lang, hit)}
</li>`;
    };
    return {
      page: {
        title: K.results[lang],
        body: html`${crumbs}<h1>${K.results[lang]}</h1>
${form}
<p class="count">${fill(K.resultsFor[lang], { total: count(lang, page.total), query: readable(query) })}${kb === undefined ? '' : ` ${fill(K.resultsIn[lang], { kb: readable(kb.kb.name) })}`}</p>
${
  page.flagged.length === 0
    ? ''
    : html`<p class="warning">${fill(K.flagged[lang], { kbs: page.flagged.map((flagged) => readable(flagged.kb.name)).join(', ') })}</p>`
}
${page.hits.length === 0 ? html`<p class="empty">${K.noResults[lang]}</p>` : html`<ol class="results">${page.hits.map(result)}</ol>`}
${pager(
  lang,
  undefined,
  page.nextCursor === undefined ? undefined : address(who, undefined, '/search', { q: query, kb: kb?.kb.id, cursor: page.nextCursor }),
  cursor === '' ? undefined : address(who, undefined, '/search', { q: query, kb: kb?.kb.id }),
)}`,
      },
    };
  };
}

/** The Knowledge Bases section, searching with `content` beside KB files (the composition root's wiring; only files are asked for). */
export function kbsSection(content: SearchedContent): ConsoleSection {
  return {
    id: ID,
    label: K.section,
    // Every signed-in person: the list says when they may use no KB yet.
    visibleTo: () => Promise.resolve(true),
    routes: routes(content).map((route) => ({ ...route, handle: withScript((who, request) => route.handle(who, request)) })),
    assets: [
      { name: SCRIPT, type: 'text/javascript; charset=utf-8', read: () => readFileSync(new URL('./static/kb-upload.js', import.meta.url), 'utf8') },
      { name: 'kbs.css', type: 'text/css; charset=utf-8', read: () => readFileSync(new URL('./static/kbs.css', import.meta.url), 'utf8') },
    ],
  };
}

/** Every page loads the section's script: the upload form's, which also brings the section's stylesheet. */
function withScript(handle: SectionRoute['handle']): SectionRoute['handle'] {
  return async (who, request) => {
    const answer = await handle(who, request);
    return 'page' in answer ? { page: { ...answer.page, scripts: [SCRIPT] } } : answer;
  };
}

function routes(content: SearchedContent): SectionRoute[] {
  return [
    { method: 'GET', path: '', handle: kbsPage },
    { method: 'GET', path: '/search', handle: searchAnswer(content) },
    { method: 'GET', path: '/:kb', handle: folderPage },
    { method: 'GET', path: '/:kb/file', handle: filePage },
    { method: 'GET', path: '/:kb/raw', handle: rawAnswer },
    { method: 'GET', path: '/:kb/image', handle: imageAnswer },
    { method: 'GET', path: '/:kb/history', handle: historyPage },
    { method: 'GET', path: '/:kb/diff', handle: diffPage },
    { method: 'POST', path: '/:kb/restore', handle: restoreAnswer },
    { method: 'POST', path: '/:kb/uploads', handle: requestAnswer },
    { method: 'POST', path: '/:kb/uploads/confirm', handle: confirmAnswer },
  ];
}
