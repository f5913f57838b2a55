/** The tenant the outside clients talk to: Alice, who may use every dialect, her team, and one public brain node. */
export const INTEROP_ORG = `tenant: acme
name: Acme Inc.
people:
  - { email: alice@acme.test, name: Alice, brain_role: admin }
teams:
  - slug: docs
    name: Docs team
    members: { alice@acme.test: admin }
brain:
  nodes:
    - { id: erp, type: tool, title: ERP, access: public }
`;

/** One tool call per endpoint, each answering with content of the tenants above (and of the OAuth suite's). */
export const ENDPOINT_CALLS: Readonly<Record<string, { readonly tool: string; readonly args: Readonly<Record<string, string>> }>> = {
  '/mcp': { tool: 'whoami', args: {} },
  '/alignbase/mcp': { tool: 'get_current_context', args: {} },
  '/atmina/mcp': { tool: 'whoami', args: {} },
  '/brain/mcp': { tool: 'read_concept', args: { id: 'erp' } },
};

/** The interpreter of the virtual environment with the official Python MCP SDK (test/services/python-mcp.sh). */
export function pythonInterpreter(): string | undefined {
  const path = process.env.KGW_TEST_PYTHON;
  if ((path === undefined || path === '') && process.env.CI === 'true') {
    throw new Error('KGW_TEST_PYTHON must be set in CI (eval "$(bash test/services/python-mcp.sh)")');
  }
  return path === '' ? undefined : path;
}

/** What the Python client scripts print of one conversation. */
export interface PythonAnswer {
  protocol_version: string;
  tools: string[];
  is_error: boolean;
  text: string | null;
  structured: Record<string, unknown> | null;
  /** Every log record at WARNING or above (a fallback, a schema the SDK could not use). */
  warnings: string[];
}
