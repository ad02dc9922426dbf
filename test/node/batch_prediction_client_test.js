// @google-cloud/aiplatform (the official Node.js client, REST fallback) running batch prediction
// on a real Trainyard server with the local executor: a BERT classifier trained by
// `trainyard-bert train` is uploaded with ModelServiceClient; JobServiceClient creates a batch
// prediction job with an instanceConfig (keyField "id", as the Node samples send), polls it with
// getBatchPredictionJob until SUCCEEDED, and the results carry the key instead of the instance
// with the labels `trainyard-bert predict` gives; list with a page size, a cancel, a delete (an
// operation the client polls under /ui/) and a 404 for the deleted job.
'use strict';
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const {requireClient, startServer, run, SKIP, noAuth, trainModel} = require('./harness');

const aiplatform = requireClient('@google-cloud/aiplatform');

const TEXTS = ['good movie', 'the bad movie'];
const tools = path.resolve(process.env.TRAINYARD_BINARY_DIR || 'build', 'tools');
const bert = path.join(tools, 'trainyard-bert');
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

async function waitEnded(jobs, name) {
  for (let i = 0; i < 600; i++) {
    const [job] = await jobs.getBatchPredictionJob({name});
    if (['JOB_STATE_SUCCEEDED', 'JOB_STATE_FAILED', 'JOB_STATE_CANCELLED'].includes(job.state)) {
      return job;
    }
    await sleep(200);
  }
  throw new Error(`${name} did not end`);
}

run(async () => {
  if (!fs.existsSync(bert)) {
    console.log(`SKIPPED: this test needs trainyard-bert, not built in ${tools}`);
    process.exit(SKIP);
  }
  const server = await startServer(
      ['--executor', 'local', '--gpus', '0', '--kill-grace-seconds', '1'],
      {PATH: `${tools}:${process.env.PATH}`});
  try {
    const expected = trainModel(bert, server.dir, path.join(server.buckets, 'models', 'bert'), TEXTS);
    for (const b of ['node-in', 'node-out']) fs.mkdirSync(path.join(server.buckets, b));
    fs.writeFileSync(path.join(server.buckets, 'node-in', 'rows.jsonl'),
                     TEXTS.map((text, i) => JSON.stringify({id: `r${i}`, text})).join('\n') + '\n');
    fs.writeFileSync(path.join(server.buckets, 'node-in', 'many.jsonl'),
                     `${JSON.stringify({id: 'x', text: 'good movie'})}\n`.repeat(200000));
    const options = {fallback: true, apiEndpoint: '127.0.0.1', port: server.port, protocol: 'http',
                     authClient: noAuth};
    const models = new aiplatform.v1.ModelServiceClient(options);
    const jobs = new aiplatform.v1.JobServiceClient(options);
    const parent = 'projects/node-project/locations/us-central1';
    const [upload] = await models.uploadModel({parent, model: {
      displayName: 'bert-node', artifactUri: 'gs://models/bert'}});
    const [uploaded] = await upload.promise();

    const request = (uri, out) => ({parent, batchPredictionJob: {
      displayName: 'node-bp', model: uploaded.model,
      inputConfig: {instancesFormat: 'jsonl', gcsSource: {uris: [uri]}},
      instanceConfig: {instanceType: 'object', keyField: 'id', excludedFields: ['id']},
      outputConfig: {predictionsFormat: 'jsonl', gcsDestination: {outputUriPrefix: out}},
      dedicatedResources: {machineSpec: {machineType: 'n1-standard-1'}, startingReplicaCount: 1,
                           maxReplicaCount: 1},
    }});
    const [created] = await jobs.createBatchPredictionJob(
        request('gs://node-in/rows.jsonl', 'gs://node-out/run'));
    assert.strictEqual(created.state, 'JOB_STATE_PENDING');
    const done = await waitEnded(jobs, created.name);
    assert.strictEqual(done.state, 'JOB_STATE_SUCCEEDED', JSON.stringify(done.error));
    assert.strictEqual(done.completionStats.successfulCount, '2');
    assert.strictEqual(done.modelVersionId, '1');
    const dir = done.outputInfo.gcsOutputDirectory.slice('gs://'.length);
    const lines = fs.readFileSync(path.join(server.buckets, dir, 'prediction.results-00000-of-00001'),
                                  'utf8').trim().split('\n').map(l => JSON.parse(l));
    const byKey = Object.fromEntries(lines.map(l => [l.key, l.prediction.label]));
    assert.deepStrictEqual(byKey, {r0: expected[0], r1: expected[1]});
    assert.ok(lines.every(l => !('instance' in l)), 'a keyed line carries the key, not the instance');

    const [long] = await jobs.createBatchPredictionJob(
        request('gs://node-in/many.jsonl', 'gs://node-out/cancel'));
    await jobs.cancelBatchPredictionJob({name: long.name});
    const cancelled = await waitEnded(jobs, long.name);
    assert.strictEqual(cancelled.state, 'JOB_STATE_CANCELLED');
    assert.strictEqual(cancelled.error.code, 1);

    const [page, next] = await jobs.listBatchPredictionJobs({parent, pageSize: 1},
                                                            {autoPaginate: false});
    assert.strictEqual(page.length, 1);
    assert.ok(next && next.pageToken, 'a second page');

    const [op] = await jobs.deleteBatchPredictionJob({name: created.name});
    await op.promise();
    await assert.rejects(jobs.getBatchPredictionJob({name: created.name}), err => err.code === 5);
    console.log('PASSED: batch prediction client (REST):', created.name, byKey);
  } finally {
    await server.stop();
  }
});
