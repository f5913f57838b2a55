-- A token issued on the console's Admin pages says so: until now its source was 'cli', as if
-- the operator had issued it on the server, and `kgw token list` could not tell them apart.
ALTER TABLE tokens DROP CONSTRAINT tokens_source_check;
ALTER TABLE tokens ADD CONSTRAINT tokens_source_check CHECK (source IN ('cli', 'oauth', 'console'));
