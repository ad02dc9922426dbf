// The gcloud command line that sends the same request as the form (the review step shows it), in
// the flags `gcloud ai custom-jobs create` and `gcloud ai hp-tuning-jobs create` take; what flags
// cannot say (env, disks, output directory, timeout; a study's spec) goes in the --config file,
// shown beside the command (JSON is YAML). gcloud has no command that creates a training pipeline,
// so for one the exact REST request is given as curl.
import { CreateForm, jobSpecOf, lines, requestOf, studySpecOf } from './model';

export interface CommandLine { command: string; configFile?: string; configText?: string; note?: string }

// A shell word: quoted unless it is plain.
export const shellWord = (s: string) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

// A gcloud list flag value: comma-separated, or with gcloud's ^D^ delimiter when a value has a comma.
function listValue(items: string[]): string {
  if (!items.some((s) => s.includes(','))) return items.join(',');
  const d = ['|', ';', '#', '~'].find((c) => !items.some((s) => s.includes(c))) ?? '|';
  return `^${d}^${items.join(d)}`;
}

function flag(name: string, value: string) { return `--${name}=${shellWord(value)}`; }

function poolFlag(f: CreateForm, i: number): string {
  const p = f.pools[i];
  if (!p.enabled && i > 0) return flag('worker-pool-spec', '');
  const kv = [`machine-type=${p.machineType}`, `replica-count=${i === 0 ? 1 : p.replicaCount}`];
  if (p.acceleratorType) kv.push(`accelerator-type=${p.acceleratorType}`, `accelerator-count=${p.acceleratorCount}`);
  if (f.codeMode === 'prebuilt') kv.push(`executor-image-uri=${f.executorImageUri.trim()}`, `python-module=${f.pythonModule.trim()}`);
  else kv.push(`container-image-uri=${f.imageUri.trim()}`);
  return flag('worker-pool-spec', kv.join(','));
}

// True when the pools need the config file: flags cannot carry env vars or disks other than the
// default (100 GB pd-ssd).
function poolsNeedConfig(f: CreateForm): boolean {
  return f.env.some((kv) => kv.key.trim() !== '') ||
    f.pools.some((p) => (p.enabled) && (p.bootDiskSizeGb !== 100 || p.bootDiskType !== 'pd-ssd'));
}

function labelsFlag(f: CreateForm): string[] {
  const kept = f.labels.filter((kv) => kv.key.trim() !== '');
  return kept.length ? [flag('labels', kept.map((kv) => `${kv.key.trim()}=${kv.value}`).join(','))] : [];
}

function customJobCommand(f: CreateForm, project: string, region: string): CommandLine {
  const parts = ['gcloud ai custom-jobs create', flag('project', project), flag('region', region),
    flag('display-name', f.displayName.trim())];
  const spec = jobSpecOf(f);
  const config: Record<string, unknown> = {};
  if (poolsNeedConfig(f)) {
    config.workerPoolSpecs = spec.workerPoolSpecs;
  } else {
    const last = f.pools.reduce((n, p, i) => (p.enabled || i === 0 ? i : n), 0);
    for (let i = 0; i <= last; i++) parts.push(poolFlag(f, i));
    if (lines(f.command).length && f.codeMode === 'custom') parts.push(flag('command', listValue(lines(f.command))));
    if (lines(f.args).length) parts.push(flag('args', listValue(lines(f.args))));
    if (f.codeMode === 'prebuilt' && lines(f.packageUris).length) {
      parts.push(flag('python-package-uris', listValue(lines(f.packageUris))));
    }
  }
  for (const k of ['baseOutputDirectory', 'scheduling']) if (spec[k]) config[k] = spec[k];
  if (spec.serviceAccount) parts.push(flag('service-account', String(spec.serviceAccount)));
  parts.push(...labelsFlag(f));
  if (Object.keys(config).length === 0) return { command: parts.join(' \\\n    ') };
  parts.push(flag('config', 'job_spec.yaml'));
  return { command: parts.join(' \\\n    '), configFile: 'job_spec.yaml', configText: JSON.stringify(config, null, 2) };
}

function hpCommand(f: CreateForm, project: string, region: string): CommandLine {
  const parts = ['gcloud ai hp-tuning-jobs create', flag('project', project), flag('region', region),
    flag('display-name', f.displayName.trim()), flag('max-trial-count', String(f.maxTrialCount)),
    flag('parallel-trial-count', String(f.parallelTrialCount))];
  if (f.maxFailedTrialCount) parts.push(flag('max-failed-trial-count', String(f.maxFailedTrialCount)));
  if (f.algorithm) parts.push(flag('algorithm', f.algorithm));
  parts.push(...labelsFlag(f), flag('config', 'hp_tuning_job.yaml'));
  const config = { studySpec: studySpecOf(f), trialJobSpec: jobSpecOf(f) };
  return { command: parts.join(' \\\n    '), configFile: 'hp_tuning_job.yaml', configText: JSON.stringify(config, null, 2) };
}

function pipelineCommand(f: CreateForm, parent: string, authenticated: boolean, origin: string): CommandLine {
  const auth = authenticated ? ' \\\n    -H "Authorization: Bearer $TOKEN"' : '';
  return {
    command: `curl -X POST${auth} \\\n    -H 'Content-Type: application/json' \\\n    -d @pipeline.json \\\n    ` +
      shellWord(`${origin}/v1/${parent}/trainingPipelines`),
    configFile: 'pipeline.json',
    configText: JSON.stringify(requestOf(f).body, null, 2),
    note: 'gcloud has no command that creates a training pipeline (the Vertex console and SDK call this REST ' +
      'method); `gcloud ai custom-jobs create` then `gcloud ai models upload --artifact-uri=OUTPUT/model/` ' +
      'are the same two steps by hand.',
  };
}

// `origin`: the server's, for the REST request of a pipeline (the console's own origin).
export function commandLineOf(f: CreateForm, parent: string, authenticated: boolean, origin: string): CommandLine {
  const [, project, , region] = parent.split('/');
  if (f.kind === 'customJob') return customJobCommand(f, project, region);
  if (f.kind === 'hpTuningJob') return hpCommand(f, project, region);
  return pipelineCommand(f, parent, authenticated, origin);
}
