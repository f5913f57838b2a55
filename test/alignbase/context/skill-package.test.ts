import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  FILE_MAX_BYTES,
  PACKAGE_MAX_BYTES,
  PACKAGE_MAX_FILES,
  PATH_MAX,
  validateAttachments,
  validatePackage,
} from '../../../src/alignbase/context/skill-package.ts';
import { parseSkillMd, SKILL_MD_MAX_BYTES } from '../../../src/alignbase/context/skill-md.ts';
import { detectMediaType } from '../../../src/alignbase/context/media-types.ts';
import type { AttachmentInput } from '../../../src/alignbase/context/skill-package.ts';
import { assertKgwError, b64, skillMdOf } from '../../support/fixtures.ts';

const PREFIX = 'invalid skill package: ';

/** A SKILL.md with the given frontmatter lines. */
const skill = (...lines: string[]): string => skillMdOf(lines, 'Do the thing.');
const BASIC = skill('name: my-skill', 'description: Does the thing.');

const file = (path: string, data: string | Buffer = 'x'): AttachmentInput => ({ path, data_base64: b64(data) });

/** Asserts `run` throws a validation error with the prefix whose reason matches `reason`. */
function rejects(run: () => unknown, reason: string | RegExp, prefix = PREFIX): void {
  assert.throws(run, (error: unknown) => {
    assertKgwError(error, 'validation');
    assert.ok(error.message.startsWith(prefix), `message ${JSON.stringify(error.message)} lacks the prefix`);
    const rest = error.message.slice(prefix.length);
    if (typeof reason === 'string') assert.equal(rest, reason);
    else assert.match(rest, reason);
    return true;
  });
}

describe('parseSkillMd', () => {
  it('reads name, description, and the frontmatter', () => {
    const parsed = parseSkillMd(skill('name: my-skill', 'description: >', '  Does the thing', '  when asked.', 'license: MIT'));
    assert.equal(parsed.name, 'my-skill');
    assert.equal(parsed.description, 'Does the thing when asked.');
    assert.deepEqual(parsed.frontmatter, { name: 'my-skill', description: 'Does the thing when asked.\n', license: 'MIT' });
  });

  it('accepts the spec example', () => {
    const md = '---\nname: skill-name\ndescription: What this skill does and when to use it.\n---\n\nWrite the Skill package instructions here.\n';
    assert.equal(parseSkillMd(md).name, 'skill-name');
  });

  describe('frontmatter framing', () => {
    const cases: [string, string, string | RegExp | null][] = [
      ['no frontmatter', '# Title\n', 'skill_md must start with YAML frontmatter: the first line must be ---'],
      ['empty skill_md', '', 'skill_md must start with YAML frontmatter: the first line must be ---'],
      ['blank line before ---', '\n---\nname: a\ndescription: b\n---\n', 'skill_md must start with YAML frontmatter: the first line must be ---'],
      ['leading space before ---', ' ---\nname: a\ndescription: b\n---\n', /first line must be ---/],
      ['---- is not a fence', '----\nname: a\ndescription: b\n---\n', /first line must be ---/],
      ['content on the opening fence', '--- name: a\ndescription: b\n---\n', /first line must be ---/],
      ['byte order mark', '\uFEFF---\nname: a\ndescription: b\n---\n', 'skill_md must start with --- (remove the byte order mark)'],
      ['missing closing ---', '---\nname: a\ndescription: b\n\nBody.\n', 'frontmatter must close with a --- line'],
      ['only an opening fence', '---', 'frontmatter must close with a --- line'],
      ['... does not close', '---\nname: a\ndescription: b\n...\nBody\n', 'frontmatter must close with a --- line'],
      ['indented closing fence does not close', '---\nname: a\ndescription: b\n ---\n', 'frontmatter must close with a --- line'],
      ['CRLF line endings', '---\r\nname: a\r\ndescription: b\r\n---\r\n\r\nBody\r\n', null],
      ['mixed line endings', '---\r\nname: a\ndescription: b\r\n---\nBody\n', null],
      ['trailing spaces on fences', '--- \nname: a\ndescription: b\n---\t\nBody\n', null],
      ['no body and no final newline', '---\nname: a\ndescription: b\n---', null],
      ['body containing another ---', '---\nname: a\ndescription: b\n---\nText\n---\nMore\n', null],
    ];
    for (const [label, md, reason] of cases) {
      it(label, () => {
        if (reason === null) assert.deepEqual(parseSkillMd(md), { name: 'a', description: 'b', frontmatter: { name: 'a', description: 'b' } });
        else rejects(() => parseSkillMd(md), reason);
      });
    }
  });

  describe('YAML', () => {
    const cases: [string, string, string | RegExp][] = [
      ['empty frontmatter', '---\n---\n', 'frontmatter must be a YAML mapping with name and description, but it is empty'],
      ['comment-only frontmatter', '---\n# nothing\n---\n', 'frontmatter must be a YAML mapping with name and description, but it is empty'],
      ['a sequence', skill('- name', '- description'), 'frontmatter must be a YAML mapping with name and description, but it is a sequence'],
      ['a scalar', skill('just text'), 'frontmatter must be a YAML mapping with name and description, but it is a scalar'],
      ['duplicate top-level key', skill('name: a', 'description: b', 'name: c'), 'frontmatter has a duplicate key "name" (line 4)'],
      ['duplicate nested key', skill('name: a', 'description: b', 'metadata:', '  k: 1', '  k: 2'), 'frontmatter has a duplicate key "k" (line 6)'],
      ['syntax error', skill('name: a', 'description: [b', 'x: 1'), /^frontmatter is not valid YAML \(line \d+\): /],
      ['tab indentation', skill('name: a', 'description: b', 'metadata:', '\tk: 1'), /^frontmatter is not valid YAML \(line \d+\): /],
      ['unresolved tag', skill('name: a', 'description: !weird b'), 'frontmatter is not valid YAML (line 3): Unresolved tag: !weird'],
      ['two documents', skill('name: a', 'description: b', '...', 'x: 1'), /^frontmatter is not valid YAML/],
      ['an escaped NUL', skill('name: a', 'description: "b\\0"'), 'frontmatter description must not contain NUL (U+0000)'],
      [
        'an escaped lone surrogate',
        skill('name: a', 'description: b', 'metadata:', '  k: "\\uD800"'),
        'frontmatter metadata.k must be well-formed Unicode (it has a lone surrogate)',
      ],
    ];
    for (const [label, md, reason] of cases) it(label, () => rejects(() => parseSkillMd(md), reason));

    it('refuses an alias bomb', () => {
      const lines = ['name: a', 'description: b', 'a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
      for (let i = 1; i < 8; i++)
        lines.push(
          `a${i}: &a${i} [${Array(10)
            .fill(`*a${i - 1}`)
            .join(', ')}]`,
        );
      rejects(() => parseSkillMd(skill(...lines)), /^frontmatter could not be read: /);
    });

    it('keeps __proto__ as a plain key', () => {
      const parsed = parseSkillMd(skill('name: a', 'description: b', '__proto__: {polluted: true}'));
      assert.equal(Object.getPrototypeOf(parsed.frontmatter), Object.prototype);
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
    });
  });

  describe('name', () => {
    const ok = ['a', '7z', 'my-skill', 'skill-2-go', 'a1b2', 'x'.repeat(64), `${'ab-'.repeat(21)}a`];
    for (const name of ok)
      it(`accepts ${name.length > 20 ? `${name.length} chars` : name}`, () => assert.equal(parseSkillMd(skill(`name: ${name}`, 'description: d')).name, name));

    const bad: [string, string][] = [
      ['x'.repeat(65), 'name cannot exceed 64 characters (got 65)'],
      [`${'ab-'.repeat(21)}ab`, 'name cannot exceed 64 characters (got 65)'],
      ['My-Skill', 'name must use lowercase letters, numbers, and single hyphens (got "My-Skill")'],
      ['my_skill', 'name must use lowercase letters, numbers, and single hyphens (got "my_skill")'],
      ['"my skill"', 'name must use lowercase letters, numbers, and single hyphens (got "my skill")'],
      ['my.skill', 'name must use lowercase letters, numbers, and single hyphens (got "my.skill")'],
      ['skïll', 'name must use lowercase letters, numbers, and single hyphens (got "skïll")'],
      ['-skill', 'name cannot start or end with a hyphen (got "-skill")'],
      ['skill-', 'name cannot start or end with a hyphen (got "skill-")'],
      ['my--skill', 'name cannot contain consecutive hyphens (got "my--skill")'],
      ['"-"', 'name cannot start or end with a hyphen (got "-")'],
      ['""', 'name cannot be empty'],
      ['', 'name must be a string, not null'],
      ['123', 'name must be a string, not a number'],
      ['true', 'name must be a string, not a boolean'],
      ['[a]', 'name must be a string, not a list'],
      ['{a: b}', 'name must be a string, not a map'],
    ];
    for (const [name, reason] of bad)
      it(`rejects ${JSON.stringify(name.length > 20 ? `${name.length} chars` : name)}`, () =>
        rejects(() => parseSkillMd(skill(`name: ${name}`, 'description: d')), reason));

    it('accepts a quoted number', () => assert.equal(parseSkillMd(skill('name: "123"', 'description: d')).name, '123'));
  });

  describe('required fields', () => {
    it('needs name and description', () => rejects(() => parseSkillMd(skill('license: MIT')), 'frontmatter must include name and description'));
    it('needs name', () => rejects(() => parseSkillMd(skill('description: d')), 'frontmatter must include name'));
    it('needs description', () => rejects(() => parseSkillMd(skill('name: a')), 'frontmatter must include description'));
  });

  describe('description', () => {
    const d = (text: string): string => parseSkillMd(skill('name: a', `description: ${JSON.stringify(text)}`)).description;
    it('accepts 1024 characters', () => assert.equal(d('x'.repeat(1024)).length, 1024));
    it('rejects 1025 characters', () => rejects(() => d('x'.repeat(1025)), 'description cannot exceed 1024 characters (got 1025)'));
    it('counts code points, not UTF-16 units', () => assert.equal(d('😀'.repeat(1024)).length, 2048));
    it('rejects 1025 code points', () => rejects(() => d('😀'.repeat(1025)), 'description cannot exceed 1024 characters (got 1025)'));
    it('trims, and measures the trimmed text', () => assert.equal(d(`  ${'x'.repeat(1024)}  \n`), 'x'.repeat(1024)));
    it('rejects empty', () => rejects(() => d(''), 'description cannot be empty'));
    it('rejects whitespace only', () => rejects(() => d(' \n\t '), 'description cannot be empty'));
    it('rejects null', () => rejects(() => parseSkillMd(skill('name: a', 'description:')), 'description must be a string, not null'));
    it('rejects a list', () => rejects(() => parseSkillMd(skill('name: a', 'description: [x]')), 'description must be a string, not a list'));
  });

  describe('optional fields', () => {
    const parse = (...extra: string[]): Record<string, unknown> => parseSkillMd(skill('name: a', 'description: d', ...extra)).frontmatter;
    it('accepts compatibility of 500 characters', () => assert.equal(parse(`compatibility: ${'c'.repeat(500)}`).compatibility, 'c'.repeat(500)));
    it('rejects compatibility of 501 characters', () =>
      rejects(() => parse(`compatibility: ${'c'.repeat(501)}`), 'compatibility cannot exceed 500 characters (got 501)'));
    it('rejects a non-string compatibility', () => rejects(() => parse('compatibility: [node]'), 'compatibility must be a string, not a list'));
    it('treats a null compatibility as absent', () => assert.equal(parse('compatibility:').compatibility, null));

    it('accepts arbitrary metadata values', () => {
      const fm = parse(
        'metadata:',
        '  alignbase-origin: "https://app.alignbase.ai/mcp"',
        '  alignbase-version: "1"',
        '  count: 3',
        '  ratio: 0.5',
        '  on: true',
        '  nothing: null',
        '  list: [1, two, {three: 3}]',
        '  nested: {deep: {deeper: [x]}}',
        '  multi: |',
        '    line one',
        '    line two',
      );
      assert.deepEqual(fm.metadata, {
        'alignbase-origin': 'https://app.alignbase.ai/mcp',
        'alignbase-version': '1',
        count: 3,
        ratio: 0.5,
        on: true,
        nothing: null,
        list: [1, 'two', { three: 3 }],
        nested: { deep: { deeper: ['x'] } },
        multi: 'line one\nline two\n',
      });
    });
    it('accepts empty metadata', () => assert.deepEqual(parse('metadata: {}').metadata, {}));
    it('rejects a metadata list', () => rejects(() => parse('metadata: [a]'), 'metadata must be a map, not a list'));
    it('rejects a metadata string', () => rejects(() => parse('metadata: text'), 'metadata must be a map, not a string'));

    it('accepts license and allowed-tools', () => {
      assert.equal(parse('license: Apache-2.0', 'allowed-tools: Read Grep')['allowed-tools'], 'Read Grep');
      assert.deepEqual(parse('allowed-tools: [Read, "Bash(git:*)"]')['allowed-tools'], ['Read', 'Bash(git:*)']);
    });
    it('rejects a non-string license', () => rejects(() => parse('license: [MIT]'), 'license must be a string, not a list'));
    it('rejects allowed-tools with non-strings', () =>
      rejects(() => parse('allowed-tools: [Read, 3]'), 'allowed-tools must be a string or a list of strings, not a list'));
    it('accepts unknown top-level keys and keeps them', () => assert.equal(parse('model: opus', 'x-custom: {a: 1}').model, 'opus'));
  });

  describe('size', () => {
    const sized = (bytes: number, fill = 'x'): string => {
      const head = skill('name: a', 'description: d');
      return head + fill.repeat(Math.floor((bytes - Buffer.byteLength(head)) / Buffer.byteLength(fill)));
    };
    it('accepts exactly 1 MiB', () => {
      const md = sized(SKILL_MD_MAX_BYTES);
      assert.equal(Buffer.byteLength(md), SKILL_MD_MAX_BYTES);
      assert.equal(parseSkillMd(md).name, 'a');
    });
    it('rejects 1 MiB + 1 byte', () =>
      rejects(() => parseSkillMd(`${sized(SKILL_MD_MAX_BYTES)}x`), `SKILL.md cannot exceed 1 MiB (1048576 bytes), got 1048577 bytes`));
    it('counts UTF-8 bytes, not characters', () => {
      const md = `${sized(SKILL_MD_MAX_BYTES - 1)}é`; // é is two bytes
      assert.ok(md.length <= SKILL_MD_MAX_BYTES);
      rejects(() => parseSkillMd(md), 'SKILL.md cannot exceed 1 MiB (1048576 bytes), got 1048577 bytes');
    });
  });
});

describe('validatePackage', () => {
  it('returns the parsed SKILL.md and the decoded files sorted by path', () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
    const result = validatePackage({
      skillMd: BASIC,
      attachments: [
        file('scripts/run.py', 'print(1)\n'),
        file('assets/logo.png', png),
        file('references/example.md', 'Reference text'),
        file('Zebra.txt', 'z'),
        file('é.txt', 'e'),
      ],
    });
    assert.equal(result.name, 'my-skill');
    assert.equal(result.description, 'Does the thing.');
    assert.equal(result.skillMd, BASIC);
    assert.deepEqual(
      result.files.map((f) => f.path),
      ['Zebra.txt', 'assets/logo.png', 'references/example.md', 'scripts/run.py', 'é.txt'],
    );
    const reference = result.files[2]!;
    assert.deepEqual(
      { ...reference, bytes: reference.bytes.toString() },
      {
        path: 'references/example.md',
        bytes: 'Reference text',
        size: 14,
        mediaType: 'text/markdown',
        digestEncoding: 'text',
        sha256: createHash('sha256').update('Reference text').digest('hex'),
      },
    );
    assert.equal(result.files[1]!.mediaType, 'image/png');
    assert.equal(result.files[1]!.digestEncoding, 'binary');
  });

  it('accepts no attachments', () => assert.deepEqual(validatePackage({ skillMd: BASIC, attachments: [] }).files, []));

  it('validates SKILL.md before attachments', () =>
    rejects(() => validatePackage({ skillMd: '# no frontmatter', attachments: [file('/abs')] }), /first line must be ---/));

  describe('paths', () => {
    const bad: [string, string][] = [
      ['', 'must not be empty'],
      ['/etc/passwd', 'must be relative to the skill directory, not absolute'],
      ['/', 'must be relative to the skill directory, not absolute'],
      ['C:/x.md', 'must be relative to the skill directory, not start with a drive letter'],
      ['c:x.md', 'must be relative to the skill directory, not start with a drive letter'],
      ['..', 'must not contain ..'],
      ['../x.md', 'must not contain ..'],
      ['a/../b', 'must not contain ..'],
      ['a/..', 'must not contain ..'],
      ['a\\b.md', 'must not use backslashes (separate directories with /)'],
      ['..\\x.md', 'must not use backslashes (separate directories with /)'],
      ['a\0b', 'must not contain null bytes'],
      ['a\nb', 'must not contain control characters'],
      ['a\u007fb', 'must not contain control characters'],
      ['x\u0085y', 'must not contain control characters'],
      ['a\u009b2Jb', 'must not contain control characters'],
      ['\u202etxt.exe', 'must not contain bidirectional formatting characters (they can disguise a name)'],
      ['docs/\u2066a\u2069.md', 'must not contain bidirectional formatting characters (they can disguise a name)'],
      ['a\u200fb', 'must not contain bidirectional formatting characters (they can disguise a name)'],
      ['lone\ud800.md', 'must be well-formed Unicode (it has a lone surrogate)'],
      ['lone\udfff.md', 'must be well-formed Unicode (it has a lone surrogate)'],
      ['.', 'needs normalization: remove its . segments'],
      ['./a.md', 'needs normalization: remove its . segments'],
      ['a/./b.md', 'needs normalization: remove its . segments'],
      ['a//b.md', 'needs normalization: it contains an empty segment (//)'],
      ['a/', 'needs normalization: it must name a file, not end with /'],
      ['x'.repeat(PATH_MAX + 1), `cannot exceed 512 characters (got 513)`],
      [`${'😀'.repeat(PATH_MAX)}x`, `cannot exceed 512 characters (got 513)`],
    ];
    for (const [path, reason] of bad) {
      it(`rejects ${JSON.stringify(path.length > 20 ? `${path.length} chars` : path)}`, () => {
        rejects(
          () => validatePackage({ skillMd: BASIC, attachments: [file('ok.md'), file(path)] }),
          `attachments[1].path ${JSON.stringify(path.length > 80 ? `${path.slice(0, 80)}…` : path)} ${reason}`,
        );
      });
    }

    const ok = ['a..b.md', '...', '.hidden', 'dir/.env', 'a b/c d.md', 'ünï/cödé.md', 'docs/SKILL.md', 'x'.repeat(PATH_MAX), '😀'.repeat(PATH_MAX), 'ab:c.md'];
    for (const path of ok) {
      it(`accepts ${JSON.stringify(path.length > 20 ? `${path.length} chars` : path)}`, () => {
        assert.equal(validatePackage({ skillMd: BASIC, attachments: [file(path)] }).files[0]!.path, path);
      });
    }

    it('names the offending path in the example form', () =>
      rejects(
        () => validatePackage({ skillMd: BASIC, attachments: [file('a'), file('b'), file('c'), file('a/../b')] }),
        'attachments[3].path "a/../b" must not contain ..',
      ));

    it('reserves SKILL.md', () =>
      rejects(
        () => validatePackage({ skillMd: BASIC, attachments: [file('SKILL.md')] }),
        'attachments[0].path "SKILL.md" is not allowed: send SKILL.md as skill_md, not as an attachment',
      ));
    it('reserves case variants of SKILL.md at the root', () => {
      for (const path of ['skill.md', 'Skill.MD']) {
        rejects(
          () => validatePackage({ skillMd: BASIC, attachments: [file(path)] }),
          `attachments[0].path ${JSON.stringify(path)} is not allowed (it would collide with SKILL.md on case-insensitive file systems): send SKILL.md as skill_md, not as an attachment`,
        );
      }
    });
    it('refuses a directory named SKILL.md', () =>
      rejects(
        () => validatePackage({ skillMd: BASIC, attachments: [file('skill.md/x')] }),
        'attachments[0].path "skill.md/x" would make SKILL.md a directory',
      ));
    it('does not reserve SKILL.md for plain attachments', () =>
      assert.equal(validateAttachments([file('SKILL.md')], { errorPrefix: 'invalid attachments: ' }).length, 1));

    it('rejects duplicates', () =>
      rejects(
        () => validatePackage({ skillMd: BASIC, attachments: [file('a.md'), file('b.md'), file('a.md')] }),
        'attachments[2].path "a.md" duplicates attachments[0].path "a.md"',
      ));
    it('rejects paths differing only in case', () =>
      rejects(
        () => validatePackage({ skillMd: BASIC, attachments: [file('Docs/A.md'), file('docs/a.md')] }),
        'attachments[1].path "docs/a.md" differs only in case from attachments[0].path "Docs/A.md"',
      ));
    it('rejects paths differing only in Unicode normalization', () => {
      rejects(
        () => validatePackage({ skillMd: BASIC, attachments: [file('caf\u00e9.md'), file('cafe\u0301.md')] }),
        /^attachments\[1\]\.path "cafe\u0301\.md" differs only in case from attachments\[0\]\.path "caf\u00e9\.md"$/,
      );
    });
    it('rejects a path that is both a file and a directory', () => {
      rejects(
        () => validatePackage({ skillMd: BASIC, attachments: [file('a/b/c.md'), file('a/b')] }),
        'attachments[0].path "a/b/c.md" needs "a/b" to be a directory, but attachments[1].path "a/b" is a file',
      );
    });
    it('rejects a non-string path', () =>
      rejects(
        () => validatePackage({ skillMd: BASIC, attachments: [{ path: 3, data_base64: 'eA==' } as unknown as AttachmentInput] }),
        'attachments[0].path must be a string',
      ));
  });

  describe('base64', () => {
    const bad: [string, string, string][] = [
      ['empty', '', 'attachments[0] ("f.bin") must have non-empty data_base64'],
      ['an invalid character', 'ab!d', 'attachments[0].data_base64 ("f.bin") is not valid base64: character "!" at offset 2 is outside the base64 alphabet'],
      [
        'URL-safe -',
        'ab-d',
        'attachments[0].data_base64 ("f.bin") is not valid base64: character "-" at offset 2 is URL-safe base64; use the standard alphabet (+ and /)',
      ],
      [
        'URL-safe _',
        'ab_d',
        'attachments[0].data_base64 ("f.bin") is not valid base64: character "_" at offset 2 is URL-safe base64; use the standard alphabet (+ and /)',
      ],
      ['a line break', 'YWJj\nZGVm', 'attachments[0].data_base64 ("f.bin") is not valid base64: line break at offset 4; send base64 without line wrapping'],
      ['a CRLF', 'YWJj\r\nZGVm', 'attachments[0].data_base64 ("f.bin") is not valid base64: line break at offset 4; send base64 without line wrapping'],
      ['a space', 'YWJj ZGVm', 'attachments[0].data_base64 ("f.bin") is not valid base64: whitespace at offset 4'],
      ['a trailing newline', 'YWJj\n', 'attachments[0].data_base64 ("f.bin") is not valid base64: line break at offset 4; send base64 without line wrapping'],
      ['missing padding', 'YWI', 'attachments[0].data_base64 ("f.bin") is not valid base64: its length 3 is not a multiple of 4 (is = padding missing?)'],
      ['a lone character', 'Y', 'attachments[0].data_base64 ("f.bin") is not valid base64: its length 1 is not a multiple of 4 (is = padding missing?)'],
      ['three = signs', 'YW===', 'attachments[0].data_base64 ("f.bin") is not valid base64: = padding at offset 2 may only end the data'],
      ['only padding', '====', 'attachments[0].data_base64 ("f.bin") is not valid base64: = padding at offset 0 may only end the data'],
      ['padding in the middle', 'YQ==YQ==', 'attachments[0].data_base64 ("f.bin") is not valid base64: = padding at offset 2 may only end the data'],
      ['too much padding for its length', 'YWJjZ===', 'attachments[0].data_base64 ("f.bin") is not valid base64: = padding at offset 5 may only end the data'],
      [
        'non-canonical bits (==)',
        'YR==',
        'attachments[0].data_base64 ("f.bin") is not valid base64: it is not canonical: the unused bits before the = padding must be zero',
      ],
      [
        'non-canonical bits (=)',
        'YWJ=',
        'attachments[0].data_base64 ("f.bin") is not valid base64: it is not canonical: the unused bits before the = padding must be zero',
      ],
    ];
    for (const [label, data, reason] of bad)
      it(`rejects ${label}`, () => rejects(() => validatePackage({ skillMd: BASIC, attachments: [{ path: 'f.bin', data_base64: data }] }), reason));

    it('accepts canonical padded and unpadded-length forms', () => {
      const files = validateAttachments(
        [
          { path: 'a', data_base64: 'YQ==' },
          { path: 'b', data_base64: 'YWI=' },
          { path: 'c', data_base64: 'YWJj' },
          { path: 'd', data_base64: '+/+/' },
        ],
        { errorPrefix: 'x: ' },
      );
      assert.deepEqual(
        files.map((f) => f.bytes),
        [Buffer.from('a'), Buffer.from('ab'), Buffer.from('abc'), Buffer.from([0xfb, 0xff, 0xbf])],
      );
    });
    it('rejects a non-string', () =>
      rejects(
        () => validatePackage({ skillMd: BASIC, attachments: [{ path: 'f', data_base64: null } as unknown as AttachmentInput] }),
        'attachments[0].data_base64 must be a string',
      ));
  });

  describe('limits', () => {
    it('accepts a file of exactly 2 MiB', () => {
      const [only] = validatePackage({ skillMd: BASIC, attachments: [file('big.bin', Buffer.alloc(FILE_MAX_BYTES, 1))] }).files;
      assert.equal(only!.size, FILE_MAX_BYTES);
    });
    it('rejects a file of 2 MiB + 1', () => {
      rejects(
        () => validatePackage({ skillMd: BASIC, attachments: [file('big.bin', Buffer.alloc(FILE_MAX_BYTES + 1, 1))] }),
        'attachments[0] ("big.bin") cannot exceed 2 MiB decoded, got 2097153 bytes',
      );
    });
    it('rejects an oversized file from its length, before checking its characters', () => {
      rejects(
        () => validatePackage({ skillMd: BASIC, attachments: [{ path: 'big.bin', data_base64: '!'.repeat(4 * 1024 * 1024) }] }),
        'attachments[0] ("big.bin") cannot exceed 2 MiB decoded, got 3145728 bytes',
      );
    });

    it('accepts a package of exactly 3 MiB including SKILL.md', () => {
      const rest = PACKAGE_MAX_BYTES - FILE_MAX_BYTES - Buffer.byteLength(BASIC);
      const result = validatePackage({ skillMd: BASIC, attachments: [file('a.bin', Buffer.alloc(FILE_MAX_BYTES)), file('b.bin', Buffer.alloc(rest))] });
      assert.equal(
        result.files.reduce((sum, f) => sum + f.size, Buffer.byteLength(BASIC)),
        PACKAGE_MAX_BYTES,
      );
    });
    it('rejects a package of 3 MiB + 1 including SKILL.md', () => {
      const md = Buffer.byteLength(BASIC);
      const rest = PACKAGE_MAX_BYTES - FILE_MAX_BYTES - md + 1;
      rejects(
        () => validatePackage({ skillMd: BASIC, attachments: [file('a.bin', Buffer.alloc(FILE_MAX_BYTES)), file('b.bin', Buffer.alloc(rest))] }),
        `total decoded package content cannot exceed 3 MiB (3145728 bytes), got 3145729 bytes (SKILL.md ${md} bytes and attachments ${FILE_MAX_BYTES + rest} bytes)`,
      );
    });
    it('rejects a package too large only because of SKILL.md', () => {
      const md = skill('name: a', 'description: d') + 'x'.repeat(1000);
      const fill = PACKAGE_MAX_BYTES - FILE_MAX_BYTES - Buffer.byteLength(md) + 1;
      rejects(
        () => validatePackage({ skillMd: md, attachments: [file('a', Buffer.alloc(FILE_MAX_BYTES)), file('b', Buffer.alloc(fill))] }),
        /^total decoded package content cannot exceed 3 MiB/,
      );
    });

    it('accepts 500 files: SKILL.md and 499 attachments', () => {
      const attachments = Array.from({ length: PACKAGE_MAX_FILES - 1 }, (_, i) => file(`f/${i}.txt`, 'x'));
      assert.equal(validatePackage({ skillMd: BASIC, attachments }).files.length, 499);
    });
    it('rejects 501 files: SKILL.md and 500 attachments', () => {
      const attachments = Array.from({ length: PACKAGE_MAX_FILES }, (_, i) => file(`f/${i}.txt`, 'x'));
      rejects(() => validatePackage({ skillMd: BASIC, attachments }), 'a package cannot include more than 500 files, got 501 (SKILL.md and 500 attachments)');
    });
  });
});

describe('validateAttachments', () => {
  const rules = { errorPrefix: 'invalid attachments: ' };
  it('uses the given prefix', () =>
    rejects(() => validateAttachments([file('../x')], rules), 'attachments[0].path "../x" must not contain ..', 'invalid attachments: '));
  it('accepts 500 attachments without SKILL.md', () => {
    assert.equal(
      validateAttachments(
        Array.from({ length: 500 }, (_, i) => file(`${i}.md`)),
        rules,
      ).length,
      500,
    );
  });
  it('rejects 501 attachments', () => {
    rejects(
      () =>
        validateAttachments(
          Array.from({ length: 501 }, (_, i) => file(`${i}.md`)),
          rules,
        ),
      'a package cannot include more than 500 files, got 501',
      'invalid attachments: ',
    );
  });
  it('applies the 3 MiB total to the attachments alone', () => {
    const at = [file('a', Buffer.alloc(FILE_MAX_BYTES)), file('b', Buffer.alloc(PACKAGE_MAX_BYTES - FILE_MAX_BYTES))];
    assert.equal(validateAttachments(at, rules).length, 2);
    at.push(file('c', 'x'));
    rejects(
      () => validateAttachments(at, rules),
      'total decoded package content cannot exceed 3 MiB (3145728 bytes), got 3145729 bytes',
      'invalid attachments: ',
    );
  });
  it('honours custom limits and reserved paths', () => {
    const custom = { errorPrefix: 'p: ', maxFiles: 2, maxFileBytes: 4, maxTotalBytes: 6, reservedPaths: [{ path: 'index.md', reason: 'send it as content' }] };
    rejects(() => validateAttachments([file('a'), file('b'), file('c')], custom), 'a package cannot include more than 2 files, got 3', 'p: ');
    rejects(() => validateAttachments([file('a', '12345')], custom), 'attachments[0] ("a") cannot exceed 4 bytes decoded, got 5 bytes', 'p: ');
    rejects(
      () => validateAttachments([file('a', '1234'), file('b', '123')], custom),
      'total decoded package content cannot exceed 6 bytes (6 bytes), got 7 bytes',
      'p: ',
    );
    rejects(
      () => validateAttachments([file('INDEX.md')], custom),
      'attachments[0].path "INDEX.md" is not allowed (it would collide with index.md on case-insensitive file systems): send it as content',
      'p: ',
    );
  });
  it('rejects a non-object entry', () =>
    rejects(
      () => validateAttachments([null as unknown as AttachmentInput], rules),
      'attachments[0] must be an object with path and data_base64',
      'invalid attachments: ',
    ));
});

describe('detectMediaType', () => {
  const bytes = (...parts: (number[] | string)[]): Buffer =>
    Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'latin1') : Buffer.from(part))));
  const pad = (buffer: Buffer, length = 64): Buffer => Buffer.concat([buffer, Buffer.alloc(Math.max(0, length - buffer.length))]);
  const u32le = (n: number): number[] => [n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, (n >>> 24) & 0xff];

  const tar = Buffer.alloc(512);
  tar.write('file.txt', 0, 'latin1');
  tar.write('ustar\u000000', 257, 'latin1');

  const binary: [string, Buffer, string][] = [
    ['png', pad(bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), 'image/png'],
    ['jpeg', pad(bytes([0xff, 0xd8, 0xff, 0xe0])), 'image/jpeg'],
    ['gif87a', pad(bytes('GIF87a')), 'image/gif'],
    ['gif89a', pad(bytes('GIF89a')), 'image/gif'],
    ['webp', pad(bytes('RIFF', [0x24, 0, 0, 0], 'WEBPVP8 ')), 'image/webp'],
    ['wav', pad(bytes('RIFF', [0x24, 0, 0, 0], 'WAVEfmt ')), 'audio/wav'],
    ['avi', pad(bytes('RIFF', [0x24, 0, 0, 0], 'AVI LIST')), 'video/x-msvideo'],
    ['pdf (pure ASCII)', bytes('%PDF-1.4\n1 0 obj\n<< >>\nendobj\n%%EOF\n'), 'application/pdf'],
    ['zip', pad(bytes([0x50, 0x4b, 0x03, 0x04, 0x14, 0])), 'application/zip'],
    ['empty zip', pad(bytes([0x50, 0x4b, 0x05, 0x06]), 22), 'application/zip'],
    ['gzip', pad(bytes([0x1f, 0x8b, 0x08, 0])), 'application/gzip'],
    ['bzip2', pad(bytes('BZh9', [0x31, 0x41, 0x59, 0x26, 0x53, 0x59])), 'application/x-bzip2'],
    ['xz', pad(bytes([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00])), 'application/x-xz'],
    ['zstd', pad(bytes([0x28, 0xb5, 0x2f, 0xfd])), 'application/zstd'],
    ['7z', pad(bytes([0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c])), 'application/x-7z-compressed'],
    ['tar', tar, 'application/x-tar'],
    ['bmp', pad(bytes('BM', u32le(70), [0, 0, 0, 0], u32le(54), u32le(40))), 'image/bmp'],
    ['ico', pad(bytes([0, 0, 1, 0, 1, 0, 16, 16, 0, 0])), 'image/x-icon'],
    ['tiff (little endian)', pad(bytes([0x49, 0x49, 0x2a, 0x00])), 'image/tiff'],
    ['tiff (big endian)', pad(bytes([0x4d, 0x4d, 0x00, 0x2a])), 'image/tiff'],
    ['wasm', pad(bytes([0x00, 0x61, 0x73, 0x6d, 0x01, 0, 0, 0])), 'application/wasm'],
    ['mp3 with ID3', pad(bytes('ID3', [0x03, 0x00, 0x00, 0, 0, 0, 0])), 'audio/mpeg'],
    ['mp3 frame', pad(bytes([0xff, 0xfb, 0x90, 0x64])), 'audio/mpeg'],
    ['mp2 frame', pad(bytes([0xff, 0xfd, 0x90, 0x64])), 'audio/mpeg'],
    ['aac', pad(bytes([0xff, 0xf1, 0x50, 0x80])), 'audio/aac'],
    ['ogg', pad(bytes('OggS', [0x00, 0x02])), 'audio/ogg'],
    ['flac', pad(bytes('fLaC', [0x00, 0x00, 0x00, 0x22])), 'audio/flac'],
    ['midi', pad(bytes('MThd', [0, 0, 0, 6, 0, 1])), 'audio/midi'],
    ['mp4', pad(bytes([0, 0, 0, 0x20], 'ftypisom')), 'video/mp4'],
    ['m4a', pad(bytes([0, 0, 0, 0x20], 'ftypM4A ')), 'audio/mp4'],
    ['mov', pad(bytes([0, 0, 0, 0x14], 'ftypqt  ')), 'video/quicktime'],
    ['heic', pad(bytes([0, 0, 0, 0x18], 'ftypheic')), 'image/heic'],
    ['avif', pad(bytes([0, 0, 0, 0x1c], 'ftypavif')), 'image/avif'],
    ['webm', pad(bytes([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x82, 0x84], 'webm')), 'video/webm'],
    ['mkv', pad(bytes([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x82, 0x88], 'matroska')), 'video/x-matroska'],
    ['woff', pad(bytes('wOFF', [0, 1, 0, 0])), 'font/woff'],
    ['woff2', pad(bytes('wOF2', [0, 1, 0, 0])), 'font/woff2'],
    ['ttf', pad(bytes([0, 1, 0, 0, 0, 0x0c])), 'font/ttf'],
    ['otf', pad(bytes('OTTO', [0, 0x0c])), 'font/otf'],
    ['sqlite', pad(bytes('SQLite format 3', [0])), 'application/vnd.sqlite3'],
  ];
  for (const [label, data, mediaType] of binary) {
    it(`detects ${label}`, () => assert.deepEqual(detectMediaType(data, 'file.md'), { mediaType, digestEncoding: 'binary' }));
  }

  const text: [string, string, string][] = [
    ['README.md', '# Title\n', 'text/markdown'],
    ['doc.markdown', '# Title\n', 'text/markdown'],
    ['NOTES.MD', '# Title\n', 'text/markdown'],
    ['a.txt', 'plain', 'text/plain'],
    ['data.json', '{"a": 1}', 'application/json'],
    ['config.yaml', 'a: 1\n', 'application/yaml'],
    ['config.yml', 'a: 1\n', 'application/yaml'],
    ['run.py', 'print(1)\n', 'text/x-python'],
    ['run.sh', 'echo hi\n', 'text/x-shellscript'],
    ['x.js', 'export {};\n', 'text/javascript'],
    ['x.mjs', 'export {};\n', 'text/javascript'],
    ['x.ts', 'export {};\n', 'text/x-typescript'],
    ['page.html', '<!doctype html><p>hi</p>', 'text/html'],
    ['style.css', 'p { color: red }', 'text/css'],
    ['rows.csv', 'a,b\n1,2\n', 'text/csv'],
    ['feed.xml', '<?xml version="1.0"?><feed/>', 'application/xml'],
    ['icon.svg', '<svg xmlns="http://www.w3.org/2000/svg"></svg>', 'image/svg+xml'],
    ['icon.svg', '<?xml version="1.0"?>\n<!-- made by hand -->\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x">\n<svg width="1"/>', 'image/svg+xml'],
    ['icon.svg', 'not really an svg', 'text/plain'],
    ['image', '\uFEFF  <svg viewBox="0 0 1 1"></svg>', 'image/svg+xml'],
    ['page.xml', '<svg/>', 'application/xml'],
    ['.gitignore', 'node_modules\n', 'text/plain'],
    ['LICENSE', 'MIT License\n', 'text/plain'],
    ['bin/tool', '#!/usr/bin/env bash\necho hi\n', 'text/x-shellscript'],
    ['bin/tool', '#!/usr/bin/env python3\nprint(1)\n', 'text/x-python'],
    ['bin/tool', '#!/bin/sh\necho hi\n', 'text/x-shellscript'],
    ['bin/tool.weird', '#!/bin/sh\necho hi\n', 'text/plain'],
    ['unknown.xyz', 'whatever', 'text/plain'],
    ['bm.txt', 'BMW makes cars, and this starts with BM.', 'text/plain'],
    ['id3.md', 'ID3 tags are for mp3 files.', 'text/markdown'],
    ['pk.txt', 'PK is not a zip unless 03 04 follows.', 'text/plain'],
    ['colors.txt', 'plain \u001b[31mred\u001b[0m text\ttabbed\r\n\f', 'text/plain'],
    ['utf8.md', 'Ünïcödé 😀 text', 'text/markdown'],
  ];
  for (const [path, content, mediaType] of text) {
    it(`types ${path} ${JSON.stringify(content.slice(0, 20))} as ${mediaType}`, () =>
      assert.deepEqual(detectMediaType(Buffer.from(content), path), { mediaType, digestEncoding: 'text' }));
  }

  const octet: [string, Buffer][] = [
    ['invalid UTF-8', Buffer.from([0x61, 0xc3, 0x28, 0x62])],
    ['a NUL byte', Buffer.from('text\0more')],
    ['UTF-16 text', Buffer.from('\uFEFFhello', 'utf16le')],
    ['mostly control characters', Buffer.from([1, 2, 3, 4, 5, 6, 7, 0x61, 0x62, 0x63])],
    ['more than 10% control characters', Buffer.from(`${'\u0001'.repeat(11)}${'a'.repeat(89)}`)],
    ['random bytes', Buffer.from([0xde, 0xad, 0xbe, 0xef, 0x00, 0x01])],
  ];
  for (const [label, data] of octet) {
    it(`treats ${label} as application/octet-stream`, () =>
      assert.deepEqual(detectMediaType(data, 'notes.md'), { mediaType: 'application/octet-stream', digestEncoding: 'binary' }));
  }
  it('allows 10% control characters in text', () =>
    assert.equal(detectMediaType(Buffer.from(`${'\u0001'.repeat(10)}${'a'.repeat(90)}`), 'a.txt').digestEncoding, 'text'));
  it('treats empty bytes as text', () => assert.deepEqual(detectMediaType(Buffer.alloc(0), 'a.md'), { mediaType: 'text/markdown', digestEncoding: 'text' }));
  it('prefers magic numbers over the extension', () =>
    assert.equal(detectMediaType(pad(bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), 'notes.txt').mediaType, 'image/png'));
});
