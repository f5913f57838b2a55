/*
 * Atmina's guidance to the agent, served as the MCP `instructions` of its endpoint (in
 * `initialize` and `server/discover`) and, under its heading, of /mcp: its spec's own text,
 * word for word, so a client that puts server instructions before the model gives it what the
 * spec tells an agent to do. docs/mcp.md, Instructions.
 */

/** The instructions of the anonymous search endpoint (docs/atmina.md, "Anonymous search"). */
export const ANONYMOUS_INSTRUCTIONS =
  "An anonymous connection to the public Knowledge Bases of one organisation: search is the only tool. A result's read_ref names read_file, which needs a signed-in connection (/atmina/mcp with a token); answer from the snippets.";

/**
 * Atmina: its spec's usage paragraphs, in its order. The tables of tools are left out (the tool
 * list describes each tool), with the sentences that point at them; confirm_uploads' example
 * call is said in words.
 */
export const ATMINA_GUIDANCE = [
  "The server's `tools/list` response is authoritative: Atmina removes tools that the caller, selected Knowledge Base, or active surface cannot use.",
  '',
  'Start with `whoami`, then `list_kbs`. If a KB is absent, do not guess its identifier: the caller lacks access or is connected to the wrong team.',
  '',
  "Answer from a sufficient snippet. For detail, pass the top result's path or file ID to `read_file`. Use `list_files` for an exhaustive request such as every file under `policies/`. If fresh content is absent, inspect `atmina://kb/{kb_id}/indexing-status`; a successful write can precede indexing.",
  '',
  'Read before changing a file and carry its returned SHA-256 as `if_match`. A conflict means somebody changed the head: reread and reapply the intended edit.',
  '',
  'Call `get_file_outline` afterward and compare `size_bytes` and `sha256`. Recompute both from the exact UTF-8 bytes after `content_integrity`.',
  '',
  'For large or binary content, call `request_uploads`, PUT the exact bytes to each URL with every returned required header, then call `confirm_uploads` with the `kb_id` and `batch_token`.',
  '',
  'Presigned image and PDF Assets may be at most 25 MiB; other admitted files retain the 100 MiB single-PUT ceiling. Expired URLs require a new request. Batch failures are per item, except duplicate paths reject the whole batch. Apply multiple edits to one path sequentially, carrying each new hash forward.',
  '',
  'Use `audit_log` to find an ID before `get_audit_event`. Query text may be absent because team privacy settings control audit detail.',
  '',
  'Useful read-only resources include `atmina://status`, `atmina://my-team`, `atmina://my-kbs`, `atmina://my-team-status`, `atmina://kb/{kb_id}`, `atmina://kb/{kb_id}/files`, `atmina://kb/{kb_id}/files/{file_id}`, and `atmina://kb/{kb_id}/indexing-status`. The server also publishes `atmina://docs/agent-quickstart` and `atmina://kb/{kb_id}/write-guide`.',
  '',
  "Treat `validation` as bad input, `permission_denied` as role or scope, `conflict` as stale state, `content_integrity` as a byte/hash mismatch, and `payload_too_large` as a signal to use presigned upload. Do not blindly retry those failures. Respect the transport's retry interval after rate limiting.",
].join('\n');
