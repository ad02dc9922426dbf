// @google-cloud/aiplatform (the official Node.js client, REST fallback) serving a model on a real
// Trainyard server with the local executor: a BERT classifier trained by `trainyard-bert train`
// uploaded with ModelServiceClient, deployed with EndpointServiceClient (operations awaited with
// the client's own polling), then PredictionServiceClient.predict answers the labels that
// `trainyard-bert predict` gives for the same texts, and rawPredict returns the model's bytes;
// undeployed and deleted at the end.
'use strict';
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const {requireClient, startServer, run, SKIP, noAuth, trainModel} = require('./harness');

const aiplatform = requireClient('@google-cloud/aiplatform');
const {helpers} = aiplatform;

// Vertex's prebuilt PyTorch serving image: Trainyard serves a trainyard-bert export natively
// behind it rather than running TorchServe.
const SERVING = 'us-docker.pkg.dev/vertex-ai/prediction/pytorch-cpu.2-4:latest';
const TEXTS = ['good movie', 'the bad movie'];
const tools = path.resolve(process.env.TRAINYARD_BINARY_DIR || 'build', 'tools');
const bert = path.join(tools, 'trainyard-bert');

// Two different labels, so that answers in the wrong order or from a model that ignores its
// input cannot match.
function expectedLabels(dir, modelDir) {
  const labels = trainModel(bert, dir, modelDir, TEXTS);
  assert.strictEqual(new Set(labels).size, TEXTS.length, String(labels));
  return labels;
}

run(async () => {
  if (!fs.existsSync(bert)) {
    // A build without LibTorch (TRAINYARD_WITH_TORCH=OFF) has no trainer to serve.
    console.log(`SKIPPED: this test needs trainyard-bert, not built in ${tools}`);
    process.exit(SKIP);
  }
  // The server starts serving replicas as `trainyard-bert serve` from its PATH.
  const server = await startServer(
      ['--executor', 'local', '--gpus', '0', '--kill-grace-seconds', '1'],
      {PATH: `${tools}:${process.env.PATH}`});
  let cleanup = null;
  try {
    const expected = expectedLabels(server.dir, path.join(server.buckets, 'models', 'bert'));
    const options = {fallback: true, apiEndpoint: '127.0.0.1', port: server.port, protocol: 'http',
                     authClient: noAuth};
    const models = new aiplatform.v1.ModelServiceClient(options);
    const endpoints = new aiplatform.v1.EndpointServiceClient(options);
    const prediction = new aiplatform.v1.PredictionServiceClient(options);
    const parent = 'projects/node-project/locations/us-central1';

    const [upload] = await models.uploadModel({parent, model: {
      displayName: 'bert-node', artifactUri: 'gs://models/bert',
      containerSpec: {imageUri: SERVING},
    }});
    const [uploaded] = await upload.promise();
    const [create] = await endpoints.createEndpoint({parent, endpoint: {displayName: 'node-ep'}});
    const [endpoint] = await create.promise();
    assert.match(endpoint.name, /^projects\/node-project\/locations\/us-central1\/endpoints\/\d+$/);
    cleanup = async () => {
      const [current] = await endpoints.getEndpoint({name: endpoint.name});
      for (const dm of current.deployedModels || []) {
        const [op] = await endpoints.undeployModel({endpoint: endpoint.name,
                                                    deployedModelId: dm.id});
        await op.promise();
      }
      const [op] = await endpoints.deleteEndpoint({name: endpoint.name});
      await op.promise();
    };

    const [deploy] = await endpoints.deployModel({
      endpoint: endpoint.name,
      deployedModel: {
        model: uploaded.model,
        // One core, so the replica fits a 2-core host beside another test's.
        dedicatedResources: {machineSpec: {machineType: 'n1-standard-1'}, minReplicaCount: 1,
                             maxReplicaCount: 1},
      },
      trafficSplit: {'0': 100},
    });
    const [deployed] = await deploy.promise();
    const deployedId = deployed.deployedModel.id;
    assert.ok(deployedId, 'the operation answers the deployed model');

    const [answer] = await prediction.predict({
      endpoint: endpoint.name,
      instances: [helpers.toValue(TEXTS[0]), helpers.toValue({text: TEXTS[1]})],
    });
    const labels = answer.predictions.map(p => helpers.fromValue(p).label);
    assert.deepStrictEqual(labels, expected);
    assert.strictEqual(answer.deployedModelId, deployedId);
    assert.strictEqual(answer.model, uploaded.model);
    assert.strictEqual(answer.modelVersionId, '1');

    // The REST fallback sends the request message as JSON, {"httpBody": {"contentType",
    // "data": base64}}, and reads the answer as an HttpBody message.
    const [raw] = await prediction.rawPredict({
      endpoint: endpoint.name,
      httpBody: {contentType: 'application/json',
                 data: Buffer.from(JSON.stringify({instances: TEXTS}))},
    });
    const rawLabels = JSON.parse(Buffer.from(raw.data).toString()).predictions.map(p => p.label);
    assert.deepStrictEqual(rawLabels, expected);

    await cleanup();
    cleanup = null;
    await assert.rejects(endpoints.getEndpoint({name: endpoint.name}), err => err.code === 5);
    console.log('PASSED: prediction client (REST):', endpoint.name, deployedId, labels);
  } finally {
    // Serving replicas outlive a stopped server (it re-adopts them on its next start): undeploy
    // whatever a failed step left behind, then stop the server.
    if (cleanup) await cleanup().catch(e => console.error('cleanup:', e.message));
    await server.stop();
  }
});
