-- The heavy calls a token runs at once, across every replica (src/mcp/call-slots.ts): a call
-- holds one of its token's slots, a row per slot, for as long as it runs and at most its lease,
-- so the slots of a replica that died free themselves. A row is taken by one statement that
-- inserts it or takes over an expired one, and given back by deleting it. Unlogged: a crash of
-- the store frees every slot, which at worst lets a token's calls in flight be joined by others.
CREATE UNLOGGED TABLE call_slots (
  key        text NOT NULL CHECK (length(key) BETWEEN 1 AND 300),
  slot       integer NOT NULL CHECK (slot >= 0),
  holder     uuid NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (key, slot)
);
