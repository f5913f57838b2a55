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
