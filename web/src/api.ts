// The REST API of the server that serves this page (same origin; see docs/api.md).
import { askForToken, forgetToken, token } from './auth';
import type { CompletionStats } from './batch_model';
import type { ContainerImage } from './create/images';

export interface ReplicaInfo { taskName: string; restarts: number; exitCode?: number }
export interface StateChange { state: string; time: string; detail?: string }
export interface MachineSpec { machineType?: string; acceleratorType?: string; acceleratorCount?: number }
export interface WorkerPoolSpec { machineSpec?: MachineSpec; replicaCount?: string; containerSpec?: { imageUri?: string } }
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
  trainyardInfo?: {
    hourlyCostUsd?: number; estimatedCostUsd?: number; replicas?: ReplicaInfo[];
    stateHistory?: StateChange[];  // oldest first: each state entered, and each replica restart
    creator?: Creator;
  };
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

// A google.rpc.BadRequest field violation: `field` is the request's field path
// ("jobSpec.workerPoolSpecs[0].replicaCount").
export interface FieldViolation { field: string; description: string }

export class ApiError extends Error {
  constructor(public status: number, message: string, public violations: FieldViolation[] = []) { super(message); }
}

// The server's machine catalog (GET /v1/machineTypes, docs/console.md).
export interface MachineTypeInfo {
  // Prices are null where the catalog has no source for them (a4-*, a4x-*): shown as "—".
  name: string; family: string; vcpus: number; memoryGib: number; usdPerHour: number | null;
  usdPerHourWithAccelerators: number | null; bundledAccelerator?: { acceleratorType: string; acceleratorCount: number };
}
export interface AcceleratorInfo { name: string; memoryGib: number; usdPerHour: number | null }
export interface MachineCatalog { machineTypes: MachineTypeInfo[]; acceleratorTypes: AcceleratorInfo[]; priceNote: string }
// Who the token is (GET /v1/caller).
export interface Caller {
  authentication: boolean; tokenId?: string; project: string; role: string;
  access: { read: boolean; write: boolean; admin: boolean };
}
// Where the resources are (GET /v1/projects).
export interface LocationInfo { locationId: string; name: string; resourceCounts: Record<string, number> }
export interface ProjectInfo { projectId: string; locations: LocationInfo[] }
// Who created a resource (src/spec/creator.h): the caller's token, or anonymous without --auth.
export interface Creator {
  anonymous?: boolean; tokenId?: string; project?: string; owner?: string; description?: string; callerIp?: string;
}
export interface Pipeline {
  name: string; displayName: string; state: string; createTime?: string; startTime?: string; endTime?: string;
  error?: { code?: number; message?: string }; labels?: Record<string, string>;
  trainingTaskInputs?: Record<string, unknown>; trainingTaskMetadata?: { backingCustomJob?: string };
  modelToUpload?: { name?: string; versionId?: string; displayName?: string }; modelId?: string; parentModel?: string;
  trainyardInfo?: { creator?: Creator };
}
export interface ModelVersion {
  name: string; displayName: string; description?: string; versionId?: string; versionAliases?: string[];
  createTime?: string; versionCreateTime?: string; updateTime?: string; artifactUri?: string;
  labels?: Record<string, string>; trainingPipeline?: string; containerSpec?: { imageUri?: string };
}
// Online prediction (docs/serving.md): endpoints, their deployed models and the operations that
// deploy and undeploy them.
export interface DeployedModel {
  id: string; model: string; modelVersionId?: string; displayName?: string; createTime?: string;
  dedicatedResources?: { machineSpec?: MachineSpec; minReplicaCount?: number; maxReplicaCount?: number };
}
export interface Endpoint {
  name: string; displayName: string; description?: string; createTime?: string; updateTime?: string;
  deployedModels?: DeployedModel[]; trafficSplit?: Record<string, number>; labels?: Record<string, string>;
  trainyardInfo?: { creator?: Creator };
}
export interface Operation<R = Record<string, unknown>> {
  name: string; done?: boolean; error?: { code?: number; message?: string }; response?: R;
  metadata?: Record<string, unknown>;
}
// Batch prediction (Vertex's batchPredictionJobs; int64 counts are strings).
export interface BatchPredictionJob {
  name: string; displayName: string; model?: string; state: string;
  createTime?: string; startTime?: string; endTime?: string; updateTime?: string;
  inputConfig?: { instancesFormat?: string; gcsSource?: { uris?: string[] } };
  outputConfig?: { predictionsFormat?: string; gcsDestination?: { outputUriPrefix?: string } };
  outputInfo?: { gcsOutputDirectory?: string };
  completionStats?: CompletionStats;
  partialFailures?: { code?: number; message?: string }[];
  error?: { code?: number; message?: string };
  dedicatedResources?: { machineSpec?: MachineSpec; startingReplicaCount?: number; maxReplicaCount?: number };
  labels?: Record<string, string>;
  trainyardInfo?: { backingCustomJob?: string; estimatedCostUsd?: number };
  [field: string]: unknown;
}
export interface GcsObject { name: string; size: string; updated?: string }
export interface Bucket { name: string }

// Pages re-render through this after a token was entered (main.ts sets it to its router).
export let onSignedIn: () => void = () => location.reload();
export function setOnSignedIn(fn: () => void) { onSignedIn = fn; }

// Sends a request with the token; a 401 asks for a token (and throws), any other non-2xx throws
// the server's google.rpc.Status message. Resolves to the answer's text.
async function send(method: string, path: string, body?: unknown): Promise<string> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const t = token();
  if (t) headers['Authorization'] = `Bearer ${t}`;
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.ok) return text;
  let json: any = {};
  try { json = text ? JSON.parse(text) : {}; } catch { /* not JSON: keep the text */ }
  const why = json?.error?.message ?? `${res.status} ${text.slice(0, 200)}`;
  if (res.status === 401) {
    if (t) forgetToken();  // expired or revoked: ask again
    askForToken(t ? `The server refused the token: ${why}` : 'This server requires an access token.',
      () => onSignedIn());
    throw new ApiError(401, `sign-in needed: ${why}`);
  }
  throw new ApiError(res.status, why, violationsOf(json));
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const text = await send(method, path, body);
  try { return (text ? JSON.parse(text) : {}) as T; } catch { throw new ApiError(502, `not JSON: ${text.slice(0, 200)}`); }
}

// The server's catalog of images it can run; an older server without the route has none.
async function containerImages(): Promise<ContainerImage[]> {
  try {
    return (await call<{ containerImages?: ContainerImage[] }>('GET', '/v1/containerImages')).containerImages ?? [];
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return [];
    throw e;
  }
}

function violationsOf(body: any): FieldViolation[] {
  const out: FieldViolation[] = [];
  for (const d of body?.error?.details ?? []) {
    if (String(d?.['@type'] ?? '').endsWith('google.rpc.BadRequest')) out.push(...(d.fieldViolations ?? []));
  }
  return out;
}

// An object's bytes as text (Cloud Storage JSON API, alt=media), or null when it does not exist.
async function objectText(bucket: string, object: string): Promise<string | null> {
  const headers: Record<string, string> = {};
  const t = token();
  if (t) headers['Authorization'] = `Bearer ${t}`;
  const res = await fetch(`/storage/v1/b/${encodeURIComponent(bucket)}/o/${encodeURIComponent(object)}?alt=media`, { headers });
  if (res.status === 404) return null;
  if (!res.ok) throw new ApiError(res.status, `${res.status} reading gs://${bucket}/${object}`);
  return res.text();
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
  createJob: (parent: string, body: unknown) => call<CustomJob>('POST', `/v1/${parent}/customJobs`, body),
  createStudy: (parent: string, body: unknown) => call<Study>('POST', `/v1/${parent}/hyperparameterTuningJobs`, body),
  createPipeline: (parent: string, body: unknown) => call<Pipeline>('POST', `/v1/${parent}/trainingPipelines`, body),
  listPipelines: (parent: string, pageSize: number, pageToken: string) =>
    call<{ trainingPipelines?: Pipeline[]; nextPageToken?: string }>(
      'GET', `/v1/${parent}/trainingPipelines${q({ pageSize, pageToken })}`),
  getPipeline: (name: string) => call<Pipeline>('GET', `/v1/${name}`),
  cancelPipeline: (name: string) => call<object>('POST', `/v1/${name}:cancel`, {}),
  deletePipeline: (name: string) => call<object>('DELETE', `/v1/${name}`),
  listModels: (parent: string, pageSize: number, pageToken: string) =>
    call<{ models?: ModelVersion[]; nextPageToken?: string }>('GET', `/v1/${parent}/models${q({ pageSize, pageToken })}`),
  getModel: (name: string) => call<ModelVersion>('GET', `/v1/${name}`),
  listModelVersions: (name: string) => call<{ models?: ModelVersion[] }>('GET', `/v1/${name}:listVersions${q({ pageSize: 1000 })}`),
  deleteModel: (name: string) => call<object>('DELETE', `/v1/${name}`),
  caller: () => call<Caller>('GET', '/v1/caller'),
  projects: () => call<{ projects?: ProjectInfo[] }>('GET', '/v1/projects'),
  machineTypes: () => call<MachineCatalog>('GET', '/v1/machineTypes'),
  listBuckets: (project: string) => call<{ items?: Bucket[] }>('GET', `/storage/v1/b${q({ project })}`),
  listObjects: (bucket: string, prefix: string) =>
    call<{ items?: GcsObject[] }>('GET', `/storage/v1/b/${encodeURIComponent(bucket)}/o${q({ prefix, maxResults: 200 })}`),
  objectText,
  containerImages,
  listEndpoints: (parent: string) => call<{ endpoints?: Endpoint[] }>('GET', `/v1/${parent}/endpoints${q({ pageSize: 100 })}`),
  getEndpoint: (name: string) => call<Endpoint>('GET', `/v1/${name}`),
  createEndpoint: (parent: string, displayName: string) =>
    call<Operation<Endpoint>>('POST', `/v1/${parent}/endpoints`, { displayName }),
  deployModel: (endpoint: string, body: unknown) => call<Operation>('POST', `/v1/${endpoint}:deployModel`, body),
  undeployModel: (endpoint: string, deployedModelId: string) =>
    call<Operation>('POST', `/v1/${endpoint}:undeployModel`, { deployedModelId }),
  predict: (endpoint: string, body: unknown) => call<Record<string, unknown>>('POST', `/v1/${endpoint}:predict`, body),
  getOperation: (name: string) => call<Operation>('GET', `/v1/${name}`),
  metricsText: () => send('GET', '/metrics'),
  listBatchJobs: (parent: string) =>
    call<{ batchPredictionJobs?: BatchPredictionJob[] }>('GET', `/v1/${parent}/batchPredictionJobs${q({ pageSize: 100 })}`),
  getBatchJob: (name: string) => call<BatchPredictionJob>('GET', `/v1/${name}`),
  createBatchJob: (parent: string, body: unknown) => call<BatchPredictionJob>('POST', `/v1/${parent}/batchPredictionJobs`, body),
  cancelBatchJob: (name: string) => call<object>('POST', `/v1/${name}:cancel`, {}),
  deleteBatchJob: (name: string) => call<Operation>('DELETE', `/v1/${name}`),
};

// Polls an operation until it is done (every `everyMs`); `alive()` false stops it (resolves null).
export async function waitOperation(op: Operation, alive: () => boolean, everyMs = 500): Promise<Operation | null> {
  let cur = op;
  while (!cur.done) {
    await new Promise((r) => setTimeout(r, everyMs));
    if (!alive()) return null;
    cur = await api.getOperation(cur.name);
  }
  return cur;
}
