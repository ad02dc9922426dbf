// @google-cloud/aiplatform (the official Node.js client) in REST fallback mode against Trainyard:
// it sends `$alt=json;enum-encoding=int` and decodes numeric enums. Custom jobs: create, get,
// list with paging, cancel, delete; HP-tuning jobs: create, get, list.
'use strict';
const assert = require('assert');
const {requireClient, startServer, run} = require('./harness');

const aiplatform = requireClient('@google-cloud/aiplatform');

// No Google credentials: requests go out without an Authorization header.
const noAuth = {
  getRequestHeaders: async () => new Headers(),
  fetch: (url, init) => fetch(url, {method: init.method, headers: init.headers, body: init.body,
                                    signal: init.signal}),
};

const sleep = ms => new Promise(r => setTimeout(r, ms));

run(async () => {
  const server = await startServer(['--executor', 'fake', '--fake-run-ms', '200']);
  const client = new aiplatform.v1.JobServiceClient({
    fallback: true, apiEndpoint: '127.0.0.1', port: server.port, protocol: 'http',
    authClient: noAuth,
  });
  const parent = 'projects/node-project/locations/us-central1';
  const spec = {
    workerPoolSpecs: [{
      machineSpec: {machineType: 'n1-standard-4'}, replicaCount: 1,
      containerSpec: {imageUri: 'local', command: ['true']},
    }],
    scheduling: {strategy: 'ON_DEMAND'},
  };
  const [created] = await client.createCustomJob({parent, customJob: {displayName: 'node-job', jobSpec: spec}});
  assert.match(created.name, /^projects\/node-project\/locations\/us-central1\/customJobs\/\d+$/);
  assert.strictEqual(created.state, 'JOB_STATE_QUEUED');
  assert.strictEqual(created.jobSpec.scheduling.strategy, 'ON_DEMAND');

  let job = created;
  for (let i = 0; i < 100 && job.state !== 'JOB_STATE_SUCCEEDED'; ++i) {
    await sleep(100);
    [job] = await client.getCustomJob({name: created.name});
  }
  assert.strictEqual(job.state, 'JOB_STATE_SUCCEEDED');

  const [second] = await client.createCustomJob({parent, customJob: {displayName: 'node-job-2', jobSpec: spec}});
  await client.cancelCustomJob({name: second.name});
  const [page, nextRequest] = await client.listCustomJobs({parent, pageSize: 1}, {autoPaginate: false});
  assert.strictEqual(page.length, 1);
  assert.ok(nextRequest && nextRequest.pageToken, 'a second page');
  const all = await client.listCustomJobs({parent});
  assert.deepStrictEqual(all[0].map(j => j.displayName).sort(), ['node-job', 'node-job-2']);
  let cancelled = second;
  for (let i = 0; i < 100 && !['JOB_STATE_CANCELLED', 'JOB_STATE_SUCCEEDED'].includes(cancelled.state); ++i) {
    await sleep(100);
    [cancelled] = await client.getCustomJob({name: second.name});
  }
  const [operation] = await client.deleteCustomJob({name: created.name});
  await operation.promise();
  await assert.rejects(client.getCustomJob({name: created.name}), err => err.code === 5);

  const [study] = await client.createHyperparameterTuningJob({parent, hyperparameterTuningJob: {
    displayName: 'node-study', maxTrialCount: 2, parallelTrialCount: 1,
    studySpec: {
      metrics: [{metricId: 'accuracy', goal: 'MAXIMIZE'}],
      parameters: [{parameterId: 'lr', doubleValueSpec: {minValue: 0.001, maxValue: 0.1},
                    scaleType: 'UNIT_LOG_SCALE'}],
      algorithm: 'RANDOM_SEARCH',
    },
    trialJobSpec: spec,
  }});
  assert.strictEqual(study.studySpec.metrics[0].goal, 'MAXIMIZE');
  assert.strictEqual(study.studySpec.algorithm, 'RANDOM_SEARCH');
  const [gotStudy] = await client.getHyperparameterTuningJob({name: study.name});
  assert.strictEqual(gotStudy.studySpec.parameters[0].scaleType, 'UNIT_LOG_SCALE');
  const [studies] = await client.listHyperparameterTuningJobs({parent});
  assert.deepStrictEqual(studies.map(s => s.displayName), ['node-study']);
  console.log('PASSED: aiplatform client (REST, numeric enums):', created.name, study.name);
});
