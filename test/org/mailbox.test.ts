import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { applyOrgFile } from '../../src/org-sections.ts';
import { cliTrail } from '../support/audit.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';
import type { RefusalCase } from './support.ts';
import { itRefuses } from './support.ts';

/*
 * people[].mailbox: where the email drafts a person approves are put. Stored as written (the
 * password's variable name, never a password), idempotent like the rest of the file, each
 * wrong value refused with its line.
 */

const file = (mailbox: string) => `tenant: mbox
name: Mailbox Ltd
people:
  - email: ana@mbox.test
    name: Ana
${mailbox}  - { email: bo@mbox.test, name: Bo }
`;

const ANA = '    mailbox:\n      password_env: ANA_IMAP_PASSWORD\n      url: imaps://mail.mbox.test\n      folder: Entwürfe\n';

const CASES: RefusalCase[] = [
  {
    title: 'a mailbox without password_env',
    source: file('    mailbox: { user: ana }\n'),
    errors: [[6, 'people[0].mailbox is missing the required key "password_env"']],
  },
  {
    title: 'a mailbox with an unknown key',
    source: file('    mailbox: { password_env: P, password: hunter2 }\n'),
    errors: [[6, 'unknown key "password" in people[0].mailbox (expected user, password_env, url, folder)']],
  },
  {
    title: 'a mailbox URL of another scheme or with credentials',
    source: file('    mailbox:\n      password_env: P\n      url: https://ana:pw@mail.mbox.test\n'),
    errors: [
      [
        8,
        'people[0].mailbox.url: "https://ana:pw@mail.mbox.test" is not an imap:// or imaps:// URL with only a host and a port, such as imaps://mail.example.com',
      ],
    ],
  },
  {
    title: 'a mailbox password_env that is not a variable name',
    source: file('    mailbox: { password_env: "1 PASSWORD" }\n'),
    errors: [[6, 'people[0].mailbox.password_env: "1 PASSWORD" is not an environment variable name (letters, digits and "_", not starting with a digit)']],
  },
  {
    title: 'a mailbox folder with a bidirectional control and a user with a space',
    source: file('    mailbox:\n      password_env: P\n      user: ana smith\n      folder: "Drafts\\u202E"\n'),
    errors: [
      [8, 'people[0].mailbox.user: "ana smith" is not an IMAP user name (1 to 254 characters, no spaces or control characters)'],
      [9, 'people[0].mailbox.folder: "Drafts\u202E" is not a folder name (1 to 200 characters, no control or bidirectional formatting characters)'],
    ],
  },
];

for (const backend of storeBackends()) {
  describe(`people[].mailbox on ${backend.name}`, () => {
    let store: TestStore;
    const stored = async () =>
      Object.fromEntries(
        (await store.db.query<{ email: string; mailbox: unknown }>("SELECT email, mailbox FROM principals WHERE kind = 'person' ORDER BY email")).map((r) => [
          r.email,
          r.mailbox,
        ]),
      );
    before(async () => {
      store = await backend.open({ migrated: true });
      await applyOrgFile(store.db, { source: file('') }, cliTrail(store.db));
    });
    after(async () => {
      await store.dispose();
    });

    it('stores the settings and the name of the password variable, never a password, and sets, keeps, changes and removes them', async () => {
      const apply = async (source: string) =>
        (await applyOrgFile(store.db, { source, env: { ANA_IMAP_PASSWORD: 'never-stored' } }, cliTrail(store.db))).changes;
      assert.deepEqual(await apply(file(ANA)), [{ action: 'update', kind: 'person', name: 'ana@mbox.test', detail: 'mailbox set' }]);
      assert.deepEqual(await stored(), {
        'ana@mbox.test': { password_env: 'ANA_IMAP_PASSWORD', url: 'imaps://mail.mbox.test', folder: 'Entwürfe' },
        'bo@mbox.test': null,
      });
      assert.ok(!JSON.stringify(await stored()).includes('never-stored'));
      assert.deepEqual(await apply(file(ANA)), []);
      assert.deepEqual(await apply(file(ANA.replace('Entwürfe', 'Drafts'))), [
        { action: 'update', kind: 'person', name: 'ana@mbox.test', detail: 'mailbox changed' },
      ]);
      assert.deepEqual(await apply(file('')), [{ action: 'update', kind: 'person', name: 'ana@mbox.test', detail: 'mailbox removed' }]);
      assert.deepEqual(await stored(), { 'ana@mbox.test': null, 'bo@mbox.test': null });
    });

    it('sets a new person’s mailbox with the person', async () => {
      const source = `${file('')}  - { email: cy@mbox.test, name: Cy, mailbox: { password_env: CY_PASSWORD } }\n`;
      const changes = (await applyOrgFile(store.db, { source }, cliTrail(store.db))).changes;
      assert.deepEqual(changes, [{ action: 'create', kind: 'person', name: 'cy@mbox.test', detail: 'mailbox set' }]);
      assert.deepEqual((await stored())['cy@mbox.test'], { password_env: 'CY_PASSWORD' });
    });

    itRefuses(() => store.db, CASES);
  });
}
