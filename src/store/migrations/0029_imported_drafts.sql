-- An open Alignbase draft brought in from another endpoint (kgw import mcp --dialect alignbase)
-- keeps where it came from, as an imported version does (0028): the source endpoint, the draft's
-- id there, the source version it was drafted on, and its author and instant there. The draft
-- tools show it as imported_from; imported_items maps the source draft to the local one (kinds
-- knowledge_draft and skill_draft), so a second run does not propose it twice.
ALTER TABLE context_drafts ADD COLUMN provenance jsonb CHECK (provenance IS NULL OR jsonb_typeof(provenance) = 'object');
CREATE TRIGGER context_drafts_provenance BEFORE UPDATE ON context_drafts FOR EACH ROW EXECUTE FUNCTION provenance_immutable();
