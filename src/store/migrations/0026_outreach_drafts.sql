-- Email drafts (propose_draft_email; docs/company-brain.md, "Email drafts") join the Company
-- Brain inbox as kind email_draft: the subject is the item's title (1 to 300 characters), the
-- body its body (up to 20,000), the addresses its recipients. The id is derived from the
-- content, so a replayed proposal finds the row that exists. Nothing here is ever sent: an
-- approved draft is put in the approver's own mailbox, and delivered_to says where.
ALTER TABLE brain_inbox
  DROP CONSTRAINT brain_inbox_kind_check,
  DROP CONSTRAINT brain_inbox_title_check,
  DROP CONSTRAINT brain_inbox_body_check,
  DROP CONSTRAINT brain_inbox_check1,
  ADD COLUMN recipients text[] NOT NULL DEFAULT '{}',
  ADD COLUMN delivered_to text,
  ADD CONSTRAINT brain_inbox_kind_check
    CHECK (kind IN ('observation', 'correction', 'proposal', 'work_output', 'onboarding_action', 'email_draft')),
  ADD CONSTRAINT brain_inbox_title_check
    CHECK (CASE WHEN kind = 'email_draft' THEN length(title) BETWEEN 1 AND 300 ELSE length(title) BETWEEN 3 AND 160 END),
  ADD CONSTRAINT brain_inbox_body_check
    CHECK (CASE kind WHEN 'email_draft' THEN length(body) BETWEEN 1 AND 20000
                     WHEN 'onboarding_action' THEN length(body) <= 4000
                     ELSE length(body) BETWEEN 10 AND 4000 END),
  ADD CONSTRAINT brain_inbox_recipients_check
    CHECK ((kind = 'email_draft') = (cardinality(recipients) BETWEEN 1 AND 10) AND cardinality(recipients) <= 10),
  ADD CONSTRAINT brain_inbox_delivered_check
    CHECK (delivered_to IS NULL OR (kind = 'email_draft' AND status = 'accepted'));

-- A person's own mailbox, where the drafts they approve are put (the org file's
-- people[].mailbox): the IMAP login, the name of the environment variable holding its
-- password (never the password), an IMAP URL in place of KGW_MAIL_IMAP_URL and the folder.
ALTER TABLE principals ADD COLUMN mailbox jsonb;
