import os from 'node:os';
import pg from 'pg';

/** The machine a result came from, as every bench's result file records it. */
export function machineInfo(): { cpu: string; cpus: number; memoryGiB: number; node: string; platform: string } {
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cpus: os.cpus().length,
    memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    platform: `${process.platform} ${os.release()} ${process.arch}`,
  };
}

/** Runs one statement on the server's maintenance connection (CREATE or DROP DATABASE of a bench's store). */
export async function adminQuery(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** PostgreSQL settings that move bulk-load and search figures, recorded beside a result so it can be reproduced. */
export const SERVER_SETTINGS = ['server_version', 'shared_buffers', 'work_mem', 'max_wal_size', 'checkpoint_timeout', 'synchronous_commit'] as const;

export async function serverSettings(serverUrl: string): Promise<Record<string, string>> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string; value: string }>(
      `SELECT name, current_setting(name) AS value FROM pg_settings WHERE name = ANY($1::text[]) ORDER BY name`,
      [SERVER_SETTINGS],
    );
    return Object.fromEntries(rows.map((r) => [r.name, r.value]));
  } finally {
    await client.end();
  }
}
