// @google-cloud/aiplatform (REST fallback) against Trainyard: training pipelines and the model
// registry as a Node notebook drives them (legacy-and-pipelines.md §3.4). On the local executor:
//   PipelineServiceClient create (no baseOutputDirectory: the server's staging bucket) -> poll get
//   until SUCCEEDED -> ModelServiceClient get of the uploaded model (ID@version, sent as %40);
//   uploadModel as an LRO, resumed by name through GET /ui/{operation}; a version via parentModel;
//   list (filter, paging), cancel (the backing job is cancelled), delete (the job and model stay);
//   a failed backing job gives a FAILED pipeline with its error and no model.
'use strict';
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const {requireClient, startServer, run} = require('./harness');

const aiplatform = requireClient('@google-cloud/aiplatform');
const {helpers} = aiplatform;

// No Google credentials; every request URL is recorded (to see where LROs are polled).
const requests = [];
const noAuth = {
  getRequestHeaders: async () => new Headers(),
  fetch: (url, init) => {
    requests.push(`${init.method || 'GET'} ${url}`);
    return fetch(url, {method: init.method, headers: init.headers, body: init.body,
                       signal: init.signal});
  },
};

const sleep = ms => new Promise(r => setTimeout(r, ms));
const parent = 'projects/node-project/locations/us-central1';
const customTask = 'gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml';

// A `local` job whose one replica runs `script` with sh.
function taskInputs(script) {
  return {workerPoolSpecs: [{machineSpec: {machineType: 'n1-standard-4'}, replicaCount: 1,
                             containerSpec: {imageUri: 'local', command: ['sh', '-c', script]}}]};
}
// Writes a model's files where the platform says (AIP_MODEL_DIR is gs://, under the bucket root).
const writeModel = 'd="$TRAINYARD_BUCKET_ROOT/${AIP_MODEL_DIR#gs://}"; mkdir -p "$d" && ' +
                   'echo "{}" > "$d/config.json" && echo weights > "$d/model.safetensors"';

async function waitFor(pipelines, name, states) {
  for (let i = 0; i < 600; ++i) {
    const [tp] = await pipelines.getTrainingPipeline({name});
    if (states.includes(tp.state)) return tp;
    await sleep(100);
  }
  const [tp] = await pipelines.getTrainingPipeline({name});
  assert.fail(`${name} is ${tp.state}, not one of ${states}`);
}

run(async () => {
  const server = await startServer(['--executor', 'local', '--gpus', '0', '--max-restarts', '0',
                                    '--kill-grace-seconds', '1']);
  const opts = {fallback: true, apiEndpoint: '127.0.0.1', port: server.port, protocol: 'http',
                authClient: noAuth};
  const pipelines = new aiplatform.v1.PipelineServiceClient(opts);
  const models = new aiplatform.v1.ModelServiceClient(opts);
  const jobs = new aiplatform.v1.JobServiceClient(opts);

  // create -> poll get until SUCCEEDED -> the uploaded model.
  const inputs = taskInputs(writeModel);
  const [created] = await pipelines.createTrainingPipeline({parent, trainingPipeline: {
    displayName: 'node-tp', trainingTaskDefinition: customTask,
    trainingTaskInputs: helpers.toValue(inputs), labels: {team: 'nlp'},
    modelToUpload: {displayName: 'node-model', containerSpec: {imageUri: 'serving-image'}}}});
  assert.match(created.name, /^projects\/node-project\/locations\/us-central1\/trainingPipelines\/\d+$/);
  assert.strictEqual(created.trainingTaskDefinition, customTask);
  assert.deepStrictEqual(helpers.fromValue(created.trainingTaskInputs), inputs);
  const id = created.name.split('/').pop();
  const done = await waitFor(pipelines, created.name, ['PIPELINE_STATE_SUCCEEDED', 'PIPELINE_STATE_FAILED']);
  assert.strictEqual(done.state, 'PIPELINE_STATE_SUCCEEDED', JSON.stringify(done.error));
  assert.ok(!done.error || !done.error.code, 'a SUCCEEDED pipeline carries no error');
  assert.strictEqual(done.modelToUpload.versionId, '1');
  const backing = helpers.fromValue(done.trainingTaskMetadata).backingCustomJob;
  const [job] = await jobs.getCustomJob({name: backing});
  assert.strictEqual(job.state, 'JOB_STATE_SUCCEEDED');
  assert.strictEqual(job.labels['trainyard-training-pipeline'], id);
  const [model] = await models.getModel({name: `${done.modelToUpload.name}@1`});
  const modelDir = `gs://trainyard-staging/aiplatform-custom-training-${id}/model/`;
  assert.strictEqual(model.artifactUri, modelDir);
  assert.strictEqual(model.displayName, 'node-model');
  assert.strictEqual(model.trainingPipeline, created.name);
  assert.deepStrictEqual(model.versionAliases, ['default']);
  assert.ok(fs.existsSync(path.join(server.buckets, modelDir.slice(5), 'model.safetensors')));

  // uploadModel: an LRO (answered done: the registry checks and records at once); resuming it by
  // name polls GET /ui/{operation}, where the client's http rules put GetOperation.
  const [op] = await models.uploadModel({parent, model: {displayName: 'node-uploaded',
    artifactUri: modelDir, containerSpec: {imageUri: 'img'}}});
  const [uploaded] = await op.promise();
  assert.strictEqual(uploaded.modelVersionId, '1');
  assert.match(op.name, new RegExp(`^${uploaded.model}/operations/\\d+$`));
  const resumed = await models.checkUploadModelProgress(op.name);
  assert.ok(resumed.done);
  assert.strictEqual(resumed.result.model, uploaded.model);
  assert.ok(requests.some(r => r.startsWith(`GET http://127.0.0.1:${server.port}/ui/${op.name}`)),
            `no poll under /ui/: ${requests.join('\n')}`);
  const [op2] = await models.uploadModel({parent, parentModel: uploaded.model,
    model: {displayName: 'node-uploaded', artifactUri: modelDir, containerSpec: {imageUri: 'img'},
            versionAliases: ['candidate']}});
  const [second] = await op2.promise();
  assert.strictEqual(second.modelVersionId, '2');
  const [byAlias] = await models.getModel({name: `${uploaded.model}@candidate`});
  assert.strictEqual(byAlias.versionId, '2');
  const [versions] = await models.listModelVersions({name: uploaded.model});
  assert.deepStrictEqual(versions.map(v => v.versionId), ['1', '2']);
  await assert.rejects(models.uploadModel({parent, model: {displayName: 'nothing',
    artifactUri: 'gs://trainyard-staging/no-such-dir/', containerSpec: {imageUri: 'img'}}}),
    err => err.code === 3 && /does not contain a model/.test(err.message));

  // A failed backing job: a FAILED pipeline with the job's error and no model.
  const [failing] = await pipelines.createTrainingPipeline({parent, trainingPipeline: {
    displayName: 'node-fails', trainingTaskDefinition: customTask,
    trainingTaskInputs: helpers.toValue(taskInputs('echo boom >&2; exit 3')),
    modelToUpload: {displayName: 'never', containerSpec: {imageUri: 'img'}}}});
  const failed = await waitFor(pipelines, failing.name, ['PIPELINE_STATE_SUCCEEDED', 'PIPELINE_STATE_FAILED']);
  assert.strictEqual(failed.state, 'PIPELINE_STATE_FAILED');
  assert.ok(failed.error && failed.error.code > 0 && /code 3|status 3|exit/.test(failed.error.message),
            JSON.stringify(failed.error));
  assert.ok(!failed.modelToUpload.name, 'no model for a failed pipeline');

  // cancel: the pipeline and its backing job end CANCELLED.
  const [slow] = await pipelines.createTrainingPipeline({parent, trainingPipeline: {
    displayName: 'node-slow', trainingTaskDefinition: customTask,
    trainingTaskInputs: helpers.toValue(taskInputs('exec sleep 120'))}});
  await waitFor(pipelines, slow.name, ['PIPELINE_STATE_RUNNING']);
  await pipelines.cancelTrainingPipeline({name: slow.name});
  const cancelled = await waitFor(pipelines, slow.name, ['PIPELINE_STATE_CANCELLED']);
  const [slowJob] = await jobs.getCustomJob(
      {name: helpers.fromValue(cancelled.trainingTaskMetadata).backingCustomJob});
  assert.strictEqual(slowJob.state, 'JOB_STATE_CANCELLED');

  // list: a server-side filter, and paging through every pipeline.
  const [succeeded] = await pipelines.listTrainingPipelines(
      {parent, filter: 'state="PIPELINE_STATE_SUCCEEDED"'});
  assert.deepStrictEqual(succeeded.map(p => p.displayName), ['node-tp']);
  const [page, next] = await pipelines.listTrainingPipelines({parent, pageSize: 2}, {autoPaginate: false});
  assert.strictEqual(page.length, 2);
  assert.ok(next && next.pageToken, 'a second page');
  const all = [];  // page by page (pageSize 2), through the client's paging
  for await (const p of pipelines.listTrainingPipelinesAsync({parent, pageSize: 2}, {autoPaginate: false})) {
    all.push(p);
  }
  assert.deepStrictEqual(all.map(p => p.displayName), ['node-slow', 'node-fails', 'node-tp']);
  const [listedModels] = await models.listModels({parent});
  assert.deepStrictEqual(listedModels.map(m => m.displayName).sort(), ['node-model', 'node-uploaded']);

  // delete: the pipeline goes, its job and its model stay; a model delete is an LRO too.
  const [deleting] = await pipelines.deleteTrainingPipeline({name: created.name});
  await deleting.promise();
  await assert.rejects(pipelines.getTrainingPipeline({name: created.name}), err => err.code === 5);
  await jobs.getCustomJob({name: backing});
  await models.getModel({name: done.modelToUpload.name});
  const [deletingModel] = await models.deleteModel({name: uploaded.model});
  await deletingModel.promise();
  await assert.rejects(models.getModel({name: uploaded.model}), err => err.code === 5);
  assert.ok(fs.existsSync(path.join(server.buckets, modelDir.slice(5), 'model.safetensors')),
            'a deleted model leaves its files');
  console.log('PASSED: aiplatform pipelines and models (REST):', created.name, done.modelToUpload.name);
});
