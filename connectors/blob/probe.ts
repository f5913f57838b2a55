import { access, constants } from 'node:fs/promises';
import type { S3Config } from '../../src/config.ts';
import type { Probe } from '../probe.ts';

/** File bytes on local disk: the data folder must be writable. */
export function diskProbe(dataDir: string): Probe {
  return { role: 'blob', backend: 'disk', check: () => access(dataDir, constants.W_OK) };
}

/** File bytes in S3: the bucket must exist and the credentials must reach it. */
export function s3Probe(s3: S3Config): Probe {
  return {
    role: 'blob',
    backend: 's3',
    async check(signal) {
      const { S3Client, HeadBucketCommand } = await import('@aws-sdk/client-s3');
      const client = new S3Client({
        region: s3.region,
        endpoint: s3.endpoint,
        forcePathStyle: s3.endpoint !== undefined,
        credentials: s3.accessKeyId && s3.secretAccessKey ? { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } : undefined,
        maxAttempts: 1,
      });
      try {
        await client.send(new HeadBucketCommand({ Bucket: s3.bucket }), { abortSignal: signal });
      } finally {
        client.destroy();
      }
    },
  };
}
