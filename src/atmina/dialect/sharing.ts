import { z } from 'zod';
import { TEAM_ROLES } from '../access/team-roles.ts';
import type { KbShare, ShareTarget } from '../kb/sharing.ts';
import { inviteToKb, revokeShare, shareKb } from '../kb/sharing.ts';
import { defineTool, jsonReply } from '../../mcp/tool.ts';
import { DESTRUCTIVE, IDEMPOTENT_WRITE, kbId } from './schemas.ts';

const role = z.enum(TEAM_ROLES).describe('viewer, editor or admin on this Knowledge Base.');
const LEGACY = 'Legacy MCP surface: prefer the app for sharing.';

const target = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('principal'), principal_id: z.string(), kind: z.enum(['person', 'agent']), name: z.string() }),
    z.object({ type: z.literal('team'), team_id: z.string(), slug: z.string(), name: z.string() }),
    z.object({ type: z.literal('invitation'), email: z.string().describe('Pending until a person signs in with this email.') }),
  ])
  .describe('Who the share is for.');

const shareOutput = z.object({
  grant_id: z.string().describe('Pass it to revoke_share.'),
  kb_id: z.string(),
  target,
  role,
  previous_role: role.nullable().describe('The role this share gave before; null for a new share.'),
  changed: z.boolean().describe('false when the target already had this role by this share.'),
});

function targetWire(value: ShareTarget): z.infer<typeof target> {
  if (value.type === 'principal') return { type: 'principal', principal_id: value.id, kind: value.kind, name: value.name };
  if (value.type === 'team') return { type: 'team', team_id: value.id, slug: value.slug, name: value.name };
  return { type: 'invitation', email: value.email };
}

function shareWire(share: KbShare): z.infer<typeof shareOutput> {
  return {
    grant_id: share.grantId,
    kb_id: share.kb.id,
    target: targetWire(share.target),
    role: share.role,
    previous_role: share.previousRole ?? null,
    changed: share.changed,
  };
}

export const shareKbTool = defineTool({
  name: 'share_kb',
  dialect: 'atmina',
  title: 'Share Knowledge Base',
  description: `Gives a person, an agent (principal_id) or every member of a team (team, by slug or team_id) a role on this Knowledge Base (Admin). Sharing again replaces the role. ${LEGACY}`,
  input: z
    .object({
      kb_id: kbId,
      principal_id: z.string().optional().describe('The person or agent to share with; or else team.'),
      team: z.string().optional().describe('The team to share with, by slug or team_id; or else principal_id.'),
      role,
    })
    .strict(),
  output: shareOutput,
  annotations: IDEMPOTENT_WRITE,
  scopes: ['context.write'],
  minimumRole: 'admin',
  async run({ caller, services, audit }, args) {
    const share = await shareKb(services.db, caller, { kbId: args.kb_id, principalId: args.principal_id, team: args.team, role: args.role }, audit);
    if (!share.changed) audit.touch({ type: 'kb', id: share.kb.id }, { type: 'kb_share', id: share.grantId });
    return jsonReply(shareWire(share));
  },
});

export const inviteToKbTool = defineTool({
  name: 'invite_to_kb',
  dialect: 'atmina',
  title: 'Invite to Knowledge Base',
  description: `Shares this Knowledge Base with a person by email (Admin): a person of the organisation gets the role at once (status shared); an unknown email gets a pending invitation that their first sign-in accepts (status invited). ${LEGACY}`,
  input: z.object({ kb_id: kbId, email: z.string().describe('The person’s email address.'), role }).strict(),
  output: shareOutput.extend({ status: z.enum(['shared', 'invited']) }),
  annotations: IDEMPOTENT_WRITE,
  scopes: ['context.write'],
  minimumRole: 'admin',
  async run({ caller, services, audit }, args) {
    const invitation = await inviteToKb(services.db, caller, { kbId: args.kb_id, email: args.email, role: args.role }, audit);
    if (!invitation.changed) audit.touch({ type: 'kb', id: invitation.kb.id }, { type: 'kb_share', id: invitation.grantId });
    return jsonReply({ ...shareWire(invitation), status: invitation.status });
  },
});

export const revokeShareTool = defineTool({
  name: 'revoke_share',
  dialect: 'atmina',
  title: 'Revoke share',
  description: `Removes a share or a pending invitation of this Knowledge Base by its grant_id (Admin); the access it gave ends at once. ${LEGACY}`,
  input: z.object({ kb_id: kbId, grant_id: z.string().describe('The grant_id share_kb or invite_to_kb answered.') }).strict(),
  output: z.object({ grant_id: z.string(), kb_id: z.string(), role, revoked: z.literal(true) }),
  annotations: DESTRUCTIVE,
  scopes: ['context.write'],
  minimumRole: 'admin',
  async run({ caller, services, audit }, args) {
    const revoked = await revokeShare(services.db, caller, { kbId: args.kb_id, grantId: args.grant_id }, audit);
    return jsonReply({ grant_id: revoked.grantId, kb_id: revoked.kb.id, role: revoked.role, revoked: true as const });
  },
});
