// Batch prediction jobs (Vertex's batchPredictionJobs): the create form's request, a job's
// progress from its completionStats (int64s as strings), and the custom job behind it. No DOM:
// unit-tested in web/test/console_unit_test.mjs.

export interface CompletionStats { successfulCount?: string; failedCount?: string; incompleteCount?: string }

export interface BatchForm {
  displayName: string;
  model: string;             // projects/P/locations/L/models/M
  sourceUris: string;        // one gs:// URI per line
  instancesFormat: 'jsonl' | 'csv';
  outputUriPrefix: string;   // gs://bucket/prefix
  machineType: string;
  startingReplicaCount: number;
  maxReplicaCount: number;
}

export const newBatchForm = (model = '', machineType = 'n1-standard-2'): BatchForm => ({
  displayName: '', model, sourceUris: '', instancesFormat: 'jsonl', outputUriPrefix: '', machineType,
  startingReplicaCount: 1, maxReplicaCount: 1,
});

export function batchRequestOf(f: BatchForm): Record<string, unknown> {
  return {
    displayName: f.displayName.trim(),
    model: f.model,
    inputConfig: {
      instancesFormat: f.instancesFormat,
      gcsSource: { uris: f.sourceUris.split('\n').map((l) => l.trim()).filter((l) => l !== '') },
    },
    outputConfig: { predictionsFormat: 'jsonl', gcsDestination: { outputUriPrefix: f.outputUriPrefix.trim() } },
    dedicatedResources: {
      machineSpec: { machineType: f.machineType },
      startingReplicaCount: f.startingReplicaCount,
      maxReplicaCount: f.maxReplicaCount,
    },
  };
}

export interface Progress { done: number; failed: number; total: number; fraction: number | null; text: string }

const count = (s?: string) => (s && /^\d+$/.test(s) ? Number(s) : 0);

// Instances predicted (successfully or not) of those known; fraction null while none are known.
export function progressOf(stats?: CompletionStats): Progress {
  const ok = count(stats?.successfulCount);
  const failed = count(stats?.failedCount);
  const total = ok + failed + count(stats?.incompleteCount);
  const done = ok + failed;
  const text = total === 0 ? 'no instances counted yet'
    : `${done.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} instances` +
      (failed ? ` (${failed.toLocaleString('en-US')} failed)` : '');
  return { done, failed, total, fraction: total ? done / total : null, text };
}

const JOB_NAME = /^projects\/[^/]+\/locations\/[^/]+\/customJobs\/[^/]+$/;

// The custom job that runs a batch prediction job, when the job names one: a field holding a
// customJob name (anywhere in it), or a label whose key speaks of a custom job holding its id.
export function backingJobOf(job: { name: string; labels?: Record<string, string> } & Record<string, unknown>): string | null {
  const parent = job.name.replace(/\/batchPredictionJobs\/.*$/, '');
  for (const [k, v] of Object.entries(job.labels ?? {})) {
    if (!/custom-?job/i.test(k)) continue;
    if (JOB_NAME.test(v)) return v;
    if (/^[\w-]+$/.test(v)) return `${parent}/customJobs/${v}`;
  }
  const found: string[] = [];
  const scan = (v: unknown) => {
    if (typeof v === 'string') { if (JOB_NAME.test(v)) found.push(v); return; }
    if (v && typeof v === 'object') Object.values(v).forEach(scan);
  };
  scan({ ...job, labels: undefined });
  return found[0] ?? null;
}
