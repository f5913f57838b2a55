import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import sharp from 'sharp';

/*
 * What the Knowledge Bases console suites share: Acme with the Docs team's handbook KB (Alice
 * its Admin, Bob its Viewer, Carol in no team), Globex with a KB of its own, and the handbook's
 * files as an agent writes them through MCP.
 */

export const KBS_ORG = `tenant: acme
name: Acme Inc.
people:
  - { email: alice@acme.test, name: Alice }
  - { email: bob@acme.test, name: Bob }
  - { email: carol@acme.test, name: Carol }
teams:
  - slug: docs
    name: Docs team
    members: { alice@acme.test: admin, bob@acme.test: viewer }
kbs:
  - { slug: handbook, name: Engineering handbook, team: docs, description: How we work }
`;

export const GLOBEX_KBS_ORG = `tenant: globex
name: Globex
language: de
people:
  - { email: hank@globex.test, name: Hank }
teams:
  - slug: ops
    name: Ops
    members: { hank@globex.test: admin }
kbs:
  - { slug: runbook, name: Runbook, team: ops }
`;

export const HOSTILE_MD = `---
title: Handbook start
tags: [start, guide]
---
# Welcome

<script>alert('script')</script>

<img src=x onerror="alert('img')">

[evil](javascript:alert('link')) and [data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==) and [vb](vbscript:msgbox)

See the [leave policy](policies/leave.md), the [policies](policies/) and [Example](https://example.com/x).

Wiki: [[leave]], [[policies/leave|the leave rules]], [[Nowhere]] and [[<b>x]].

![A red square](img/red.png) and ![elsewhere](https://example.com/pic.png)

| left | right |
|:-----|------:|
| a    | b     |

Bidi: \u202eevil
`;

/** The first and only KB id of `slug` a client lists. */
export async function kbIdOf(client: Client, slug: string): Promise<string> {
  const { kbs } = (await client.callTool({ name: 'list_kbs', arguments: {} })).structuredContent as { kbs: { kb_id: string; slug: string }[] };
  return kbs.find((kb) => kb.slug === slug)?.kb_id ?? assert.fail(`no KB ${slug}`);
}

export async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args });
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  return result.structuredContent as Record<string, unknown>;
}

/** Seeds the handbook with the files the console suites read, as Alice's agent would write them. */
export async function seedHandbook(client: Client, kbId: string): Promise<void> {
  await call(client, 'write_file', { kb_id: kbId, path: 'index.md', mode: 'create', content: HOSTILE_MD });
  await call(client, 'write_file', {
    kb_id: kbId,
    path: 'policies/leave.md',
    mode: 'create',
    content: '# Leave policy\n\nEveryone takes 30 days of vacation.\n',
  });
  await call(client, 'write_file', {
    kb_id: kbId,
    path: 'policies/leave.md',
    mode: 'overwrite',
    content: '# Leave policy\n\nEveryone takes 25 days of vacation.\n',
  });
  await call(client, 'write_file', { kb_id: kbId, path: 'notes.txt', mode: 'create', content: 'plain <b>text</b>\n' });
  const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#ff0000' } })
    .png()
    .toBuffer();
  await call(client, 'upload_file', {
    kb_id: kbId,
    filename: 'img/red.png',
    mime_type: 'image/png',
    content_base64: png.toString('base64'),
    description: 'A red square',
  });
}
