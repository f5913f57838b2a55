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
