// The REST API of the server that serves this page (same origin; see docs/api.md).

export interface ReplicaInfo { taskName: string; restarts: number; exitCode?: number }
export interface MachineSpec { machineType?: string; acceleratorType?: string; acceleratorCount?: number }
export interface WorkerPoolSpec { machineSpec?: MachineSpec; replicaCount?: string }
export interface CustomJob {
  name: string;
  displayName: string;
  state: string;
  createTime?: string;
  startTime?: string;
  endTime?: string;
  updateTime?: string;
  error?: { code?: number; message?: string };
  labels?: Record<string, string>;
  jobSpec: { workerPoolSpecs: WorkerPoolSpec[]; baseOutputDirectory?: { outputUriPrefix?: string } };
  trainyardInfo?: { hourlyCostUsd?: number; estimatedCostUsd?: number; replicas?: ReplicaInfo[] };
}
export interface LogEntry { cursor: string; time: string; taskName: string; stream: string; text: string }
export interface LogPage { entries: LogEntry[]; nextCursor: string; jobState: string; done: boolean }
export interface ScalarSeries { run: string; tag: string; points: [number, number | null, number | null][] }
export interface ScalarsPage {
  logDir: string | null; series: ScalarSeries[]; nextCursor: string; more: boolean;
  jobState: string; warnings: string[];
}
export interface Parameter { parameterId: string; value: number | string }
export interface Metric { metricId: string; value: number }
export interface Trial {
  id: string; state: string; parameters?: Parameter[];
  finalMeasurement?: { metrics?: Metric[] }; customJob?: string; startTime?: string; endTime?: string;
  earlyStopped?: boolean; jobFailed?: boolean;
}
export interface Study {
  name: string; displayName: string; state: string; createTime?: string; startTime?: string; endTime?: string;
  studySpec: { metrics: { metricId: string; goal: string }[]; parameters: { parameterId: string }[] };
  maxTrialCount?: number; parallelTrialCount?: number; trials?: Trial[]; error?: { message?: string };
  labels?: Record<string, string>;
}

export class ApiError extends Error {
  constructor(public status: number, message: string) { super(message); }
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any = {};
  try { json = text ? JSON.parse(text) : {}; } catch { /* not JSON: keep the text */ }
  if (!res.ok) throw new ApiError(res.status, json?.error?.message ?? `${res.status} ${text.slice(0, 200)}`);
  return json as T;
}

const q = (params: Record<string, string | number | undefined>) => {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') s.set(k, String(v));
  const t = s.toString();
  return t ? `?${t}` : '';
};

export const api = {
  listJobs: (parent: string, filter: string, pageSize: number, pageToken: string) =>
    call<{ customJobs?: CustomJob[]; nextPageToken?: string }>(
      'GET', `/v1/${parent}/customJobs${q({ filter, pageSize, pageToken })}`),
  getJob: (name: string) => call<CustomJob>('GET', `/v1/${name}`),
  cancelJob: (name: string) => call<object>('POST', `/v1/${name}:cancel`, {}),
  deleteJob: (name: string) => call<object>('DELETE', `/v1/${name}`),
  logs: (name: string, after: string, taskName: string, waitSeconds: number) =>
    call<LogPage>('GET', `/v1/${name}:logs${q({ after, taskName, waitSeconds, pageSize: 2000 })}`),
  scalars: (name: string, after: string) => call<ScalarsPage>('GET', `/v1/${name}:scalars${q({ after })}`),
  listStudies: (parent: string, filter: string, pageSize: number, pageToken: string) =>
    call<{ hyperparameterTuningJobs?: Study[]; nextPageToken?: string }>(
      'GET', `/v1/${parent}/hyperparameterTuningJobs${q({ filter, pageSize, pageToken })}`),
  getStudy: (name: string) => call<Study>('GET', `/v1/${name}`),
  cancelStudy: (name: string) => call<object>('POST', `/v1/${name}:cancel`, {}),
  deleteStudy: (name: string) => call<object>('DELETE', `/v1/${name}`),
};
