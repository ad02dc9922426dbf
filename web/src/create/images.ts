// The container images the create form offers (a datalist: the user may still type any image):
// the server's catalog (`GET /v1/containerImages`, the images it can run, each with what it is
// for) and the images this project's custom jobs used, newest first. No DOM: unit-tested in
// web/test/console_unit_test.mjs.

export type ImageUse = 'TRAINING' | 'SERVING';
export interface ContainerImage { imageUri: string; description?: string; use?: ImageUse }
// The fields of a custom job this reads (api.ts' CustomJob has them).
export interface JobImages {
  createTime?: string; labels?: Record<string, string>;
  jobSpec?: { workerPoolSpecs?: { containerSpec?: { imageUri?: string } }[] };
}

export interface ImageChoice { value: string; label: string }

// A replica of a deployed model is a custom job too (label trainyard-endpoint), as is the job
// that runs a batch prediction (label trainyard-batch-prediction): their images train nothing.
const isServingReplica = (j: JobImages) => !!j.labels?.['trainyard-endpoint'];
const isBatchPrediction = (j: JobImages) => !!j.labels?.['trainyard-batch-prediction'];

// Catalog images for `use` first (with their description), then recently used ones not among
// them, newest job first, each image once.
export function imageChoices(catalog: ContainerImage[], jobs: JobImages[], use: ImageUse): ImageChoice[] {
  const out: ImageChoice[] = [];
  const seen = new Set<string>();
  const add = (value: string | undefined, label: string) => {
    if (!value || seen.has(value)) return;
    seen.add(value);
    out.push({ value, label });
  };
  for (const c of catalog) if ((c.use ?? 'TRAINING') === use) add(c.imageUri, c.description ?? '');
  const newest = [...jobs].filter((j) => (use === 'SERVING' ? isServingReplica(j) : !isServingReplica(j) && !isBatchPrediction(j)))
    .sort((a, b) => (b.createTime ?? '').localeCompare(a.createTime ?? ''));
  for (const j of newest) {
    for (const p of j.jobSpec?.workerPoolSpecs ?? []) add(p.containerSpec?.imageUri, 'used recently');
  }
  return out;
}
