-- The rate limiters every replica shares (src/auth/shared-rate.ts): one row per limiter and key
-- (a principal, a client address), counting the events of its current fixed window. Each event
-- is counted by one statement that locks the row, so replicas counting at once neither lose nor
-- double a count, and the store's clock starts every window, so replicas agree on it. Unlogged:
-- a crash of the store loses the current windows, which only lets a minute's worth through again.
CREATE UNLOGGED TABLE rate_windows (
  limiter    text NOT NULL CHECK (length(limiter) BETWEEN 1 AND 64),
  key        text NOT NULL CHECK (length(key) BETWEEN 1 AND 300),
  started_at timestamptz NOT NULL,
  spent      integer NOT NULL CHECK (spent > 0),
  PRIMARY KEY (limiter, key)
);

-- Windows that ended long ago are swept by started_at.
CREATE INDEX rate_windows_started ON rate_windows (started_at);
