// @google-cloud/storage (the official Node.js client) against Trainyard through
// STORAGE_EMULATOR_HOST: bucket create, a 20 MB resumable upload in 8 MiB chunks and its download
// compared by MD5, a small multipart upload, listing with prefix/delimiter, metadata, delete.
'use strict';
const assert = require('assert');
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const {requireClient, startServer, run} = require('./harness');

const {Storage} = requireClient('@google-cloud/storage');

function md5(file) {
  return crypto.createHash('md5').update(fs.readFileSync(file)).digest('base64');
}

run(async () => {
  const server = await startServer(['--executor', 'fake']);
  process.env.STORAGE_EMULATOR_HOST = server.endpoint;
  const storage = new Storage({projectId: 'test-project'});
  const [bucket] = await storage.createBucket('node-bucket');

  const big = path.join(server.dir, 'big.bin');
  fs.writeFileSync(big, crypto.randomBytes(20 * 1024 * 1024));
  const [uploaded] = await bucket.upload(big, {
    destination: 'data/big.bin', resumable: true, chunkSize: 8 * 1024 * 1024,
    metadata: {contentType: 'application/x-test', metadata: {origin: 'node'}},
  });
  assert.strictEqual(uploaded.metadata.md5Hash, md5(big), 'md5Hash of the uploaded object');
  assert.strictEqual(Number(uploaded.metadata.size), 20 * 1024 * 1024);
  // The object is the plain file under the bucket root.
  assert.strictEqual(md5(path.join(server.buckets, 'node-bucket', 'data', 'big.bin')), md5(big));

  const back = path.join(server.dir, 'back.bin');
  await bucket.file('data/big.bin').download({destination: back, validation: 'md5'});
  assert.strictEqual(md5(back), md5(big), 'downloaded bytes match by MD5');

  await bucket.file('data/small.txt').save('hello world', {resumable: false, contentType: 'text/plain'});
  const [text] = await bucket.file('data/small.txt').download();
  assert.strictEqual(text.toString(), 'hello world');
  const [meta] = await bucket.file('data/big.bin').getMetadata();
  assert.strictEqual(meta.contentType, 'application/x-test');
  assert.strictEqual(meta.metadata.origin, 'node');

  const [files, , response] = await bucket.getFiles({prefix: 'data/', delimiter: '/', autoPaginate: false});
  assert.deepStrictEqual(files.map(f => f.name), ['data/big.bin', 'data/small.txt']);
  const [top, , topResponse] = await bucket.getFiles({delimiter: '/', autoPaginate: false});
  assert.deepStrictEqual(topResponse.prefixes, ['data/']);
  assert.strictEqual(top.length, 0);

  await bucket.file('data/small.txt').delete();
  const [exists] = await bucket.file('data/small.txt').exists();
  assert.strictEqual(exists, false);
  console.log('PASSED: storage client (20 MB resumable upload/download, MD5', md5(big) + ')');
});
